package store

import (
	"context"
	"database/sql"
	"slices"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

// RecentLeadColumns are the columns of leads that EachRecentLead reads:
// every one but account_id (the caller's), junk_override, received_at and
// updated_at, which neither a rule, the preview nor an event reads. The
// preview benchmark streams the same columns for its baseline.
const RecentLeadColumns = "id, external_id, source, partial, email, phone, phone_e164, phone_country, first_name, last_name, " +
	"city, state, zip, country, gender, date_of_birth, message, fbclid, fbc, fbp, client_ip_address, " +
	"client_user_agent, event_source_url, fill_seconds, honeypot, meta_lead_id, fields, match_keys, " +
	"email_hash, phone_hash, junk, junk_reasons, stage, test, created_at"

// EachRecentLead calls fn with each lead of an account captured since, in
// no particular order, stopping at fn's first error: for a rule's preview
// and for applying a rule to recent leads. It reads every lead, however
// many, one at a time. Without an order the database reads the rows as a
// COPY of them would (in the table's order, not the index's, and with no
// sort): the preview keeps its newest examples itself (rule.Preview).
//
// The lead passed has RecentLeadColumns filled in and AccountID set. Its
// strings stay valid after fn returns; the lead itself, and what its
// pointers (ExternalID, FillSeconds) point to, are reused for the next.
// Rows are scanned straight into it (eachRow).
func (s *Store) EachRecentLead(ctx context.Context, accountID int64, since time.Time, fn func(*models.Lead) error) error {
	var (
		l           = models.Lead{AccountID: accountID}
		source      string
		externalID  sql.NullString
		fillSeconds sql.NullFloat64
		fnErr       error
	)
	dest := []any{&l.ID, &externalID, &source, &l.Partial, &l.Email, &l.Phone, &l.PhoneE164, &l.PhoneCountry, &l.FirstName, &l.LastName,
		&l.City, &l.State, &l.Zip, &l.Country, &l.Gender, &l.DateOfBirth, &l.Message, &l.FBCLID, &l.FBC, &l.FBP, &l.ClientIP,
		&l.ClientUserAgent, &l.EventSourceURL, &fillSeconds, &l.Honeypot, &l.MetaLeadID, &l.Fields, &l.MatchKeys,
		&l.EmailHash, &l.PhoneHash, &l.Junk, &l.JunkReasons, &l.Stage, &l.Test, &l.CreatedAt}
	err := s.eachRow(ctx, `SELECT `+RecentLeadColumns+` FROM leads WHERE account_id = ? AND created_at >= ?`, []any{accountID, since.UTC()},
		func(row rowScanner) error {
			if err := row.Scan(dest...); err != nil {
				return err
			}
			l.Source, l.ExternalID, l.FillSeconds = models.Source(source), nil, nil
			if externalID.Valid {
				l.ExternalID = &externalID.String
			}
			if fillSeconds.Valid {
				l.FillSeconds = &fillSeconds.Float64
			}
			fnErr = fn(&l)
			return fnErr
		})
	if fnErr != nil {
		return fnErr
	}
	return wrap("recent leads", err)
}

// MaxFieldNames is the most custom field names CustomFieldNames returns,
// in name order: a form that sends a new name with each lead must not
// make the rule form's field picker endless.
const MaxFieldNames = 500

// FieldNamesSample is how many of an account's newest leads with custom
// fields CustomFieldNames reads.
const FieldNamesSample = 10_000

// CustomFieldNames lists the custom form field names of an account's
// leads captured since, in byte order: the names the rule form offers and
// accepts. It reads the newest FieldNamesSample leads that have custom
// fields, so that the rule form of a busy account stays fast; a field
// that only older leads carried is left out.
func (s *Store) CustomFieldNames(ctx context.Context, accountID int64, since time.Time) ([]string, error) {
	keys := "json_each(l.fields) AS k"
	if s.dialect == "postgres" {
		keys = "json_object_keys(l.fields::json) AS k(key)"
	}
	var names []string
	err := s.q(ctx).Raw(`SELECT DISTINCT k.key FROM (
			SELECT fields FROM leads WHERE account_id = ? AND created_at >= ? AND fields LIKE '{%' AND fields <> '{}'
			ORDER BY created_at DESC, id DESC LIMIT ?
		) l, `+keys+` ORDER BY 1 LIMIT ?`, accountID, since.UTC(), FieldNamesSample, MaxFieldNames).Scan(&names).Error
	slices.Sort(names) // in byte order: the databases' collations differ
	return names, wrap("custom field names", err)
}

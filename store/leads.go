package store

import (
	"context"
	"strings"
	"time"
	"unicode"

	"gorm.io/gorm"

	"github.com/leadsignal/leadsignal/models"
)

// InsertLead stores a new lead; ErrConflict when the account already has a
// lead with its external_id.
func (s *Store) InsertLead(ctx context.Context, l *models.Lead) error {
	return wrap("insert lead", s.q(ctx).Create(l).Error)
}

// SaveLead writes every column of an existing lead of its account.
func (s *Store) SaveLead(ctx context.Context, l *models.Lead) error {
	return wrap("save lead", s.Tx(ctx, func(tx *Store) error {
		res := tx.q(ctx).Where("account_id = ?", l.AccountID).Select("*").Omit("id", "account_id", "received_at").Updates(l)
		if res.Error == nil && res.RowsAffected == 0 {
			return ErrNotFound
		}
		if res.Error != nil {
			return res.Error
		}
		return tx.unprepare(ctx, []int64{l.ID})
	}))
}

// unprepare drops the prepared payloads of leads' unsent events, after
// the leads changed: the dispatcher then builds them from each lead as it
// is (and holds them back if a person marked it junk).
func (s *Store) unprepare(ctx context.Context, leadIDs []int64) error {
	if s.dialect == "postgres" {
		_, err := s.conn().ExecContext(ctx, unprepareSQL, leadIDs)
		return err
	}
	return eachChunk(leadIDs, func(ids []int64) error {
		return s.q(ctx).Model(&models.Event{}).Where("payload_stamp <> 0 AND id IN (?)",
			s.q(ctx).Model(&unsentEvent{}).Select("event_id").Where("lead_id IN ?", ids)).
			Update("payload_stamp", 0).Error
	})
}

// LeadByExternalID finds an account's lead by the caller's id.
func (s *Store) LeadByExternalID(ctx context.Context, accountID int64, externalID string) (models.Lead, error) {
	var l models.Lead
	err := s.q(ctx).Where("account_id = ? AND external_id = ?", accountID, externalID).Take(&l).Error
	return l, wrap("lead by external id", err)
}

// Lead finds one lead of an account.
func (s *Store) Lead(ctx context.Context, accountID, leadID int64) (models.Lead, error) {
	var l models.Lead
	err := s.q(ctx).Where("account_id = ? AND id = ?", accountID, leadID).Take(&l).Error
	return l, wrap("lead", err)
}

// LeadFilter narrows the leads list; zero values mean "any".
type LeadFilter struct {
	From, To time.Time
	// Junk is "junk", "clean" or "".
	Junk   string
	Source models.Source
	// Partial is "yes", "no" or "".
	Partial string
	// Stage is a stage name, "none" for leads without one, or "".
	Stage string
	// Stages, when set, keeps the leads whose stage is one of them, as
	// written (LeadStages lists the spellings there are): the leads that
	// reached a stage are those at it or at a later one. Empty, not nil,
	// keeps none.
	Stages []string
	// Reached, when set, keeps the leads that first reached a stage
	// (written as one of Reached.Labels) in [From, To): what the Overview's
	// stage rows count (stage_counts, migration 0033).
	Reached *Reach
	// Campaign keeps the leads whose URL's utm_campaign is this, as
	// written there (Campaign).
	Campaign string
	// Query matches email, phone and name, case-insensitively.
	Query string
	// EmailHash matches the leads with this email hash: a search for a
	// whole email address, answered from an index rather than a scan.
	EmailHash string
}

// LeadCursor is the position after the last lead of a page: leads are
// listed newest first, and the next page starts strictly after it.
type LeadCursor struct {
	CreatedAt time.Time
	ID        int64
}

func (s *Store) filterLeads(ctx context.Context, accountID int64, f LeadFilter) *gorm.DB {
	q := s.q(ctx).Model(&models.Lead{}).Where("account_id = ?", accountID)
	if !f.From.IsZero() {
		q = q.Where("created_at >= ?", f.From.UTC())
	}
	if !f.To.IsZero() {
		q = q.Where("created_at < ?", f.To.UTC())
	}
	// Literal predicates: a plan for any parameters can then use the
	// partial indexes of 0005.
	switch f.Junk {
	case "junk":
		q = q.Where("junk")
	case "clean":
		q = q.Where("NOT junk")
	}
	if f.Source != "" {
		q = q.Where("source = ?", f.Source)
	}
	switch f.Partial {
	case "yes":
		q = q.Where("partial")
	case "no":
		q = q.Where("NOT partial")
	}
	switch f.Stage {
	case "":
	case "none":
		q = q.Where("stage = ''")
	default:
		q = q.Where("stage <> '' AND stage = ?", f.Stage)
	}
	switch {
	case f.Stages == nil:
	case len(f.Stages) == 0:
		q = q.Where("1 = 0")
	default:
		q = q.Where("stage IN ?", f.Stages)
	}
	switch r := f.Reached; {
	case r == nil:
	case len(r.Labels) == 0:
		q = q.Where("1 = 0")
	default:
		q = q.Where("id IN (SELECT sc.lead_id FROM stage_changes sc WHERE sc.account_id = ? AND sc.stage IN ? "+
			"AND sc.occurred_at >= ? AND sc.occurred_at < ? AND "+firstReachSQL+")",
			accountID, r.Labels, r.From.UTC(), r.To.UTC())
	}
	if f.Campaign != "" {
		q = q.Where("utm_campaign(event_source_url) = ?", f.Campaign)
	}
	if f.EmailHash != "" {
		q = q.Where("email_hash = ?", f.EmailHash)
	}
	if t := strings.TrimSpace(f.Query); t != "" {
		like := "%" + escapeLike(strings.ToLower(t)) + "%"
		// Phone digits are searched for a term that reads as a phone
		// number: no letters, at least 3 digits. "lead2024" is part of an
		// email or a name, not of a phone number.
		digits := ""
		if !strings.ContainsFunc(t, unicode.IsLetter) {
			digits = onlyDigits(t)
		}
		var cond string
		var args []any
		if s.dialect == "postgres" {
			// One text, one trigram index (0007). A phone number is looked
			// for by its digits alone: written as typed, "(415) 692-4281",
			// it is in no email or name.
			cond, args = searchText+" LIKE ? ESCAPE '\\'", []any{like}
			if len(digits) >= 3 {
				cond, args = searchText+" LIKE ?", []any{"%" + digits + "%"}
			}
		} else {
			cond = "lower(email) LIKE ? ESCAPE '\\' OR lower(first_name || ' ' || last_name) LIKE ? ESCAPE '\\'"
			args = []any{like, like}
			if len(digits) >= 3 {
				cond += " OR phone_e164 LIKE ?"
				args = append(args, "%"+digits+"%")
			}
		}
		q = q.Where("("+cond+")", args...)
	}
	return q
}

// searchText is what the free-text search reads on Postgres, the expression
// of the trigram index leads_search_idx (migration 0007): the email, the
// name and the phone digits, joined by chr(1), which no term holds.
const searchText = "(lower(email) || chr(1) || lower(first_name || ' ' || last_name) || chr(1) || phone_e164)"

// Leads returns up to limit leads of an account matching f, newest first,
// starting after the cursor when one is given.
func (s *Store) Leads(ctx context.Context, accountID int64, f LeadFilter, after *LeadCursor, limit int) ([]models.Lead, error) {
	q := s.filterLeads(ctx, accountID, f)
	if after != nil {
		q = q.Where("(created_at < ? OR (created_at = ? AND id < ?))", after.CreatedAt.UTC(), after.CreatedAt.UTC(), after.ID)
	}
	var ls []models.Lead
	err := q.Order("created_at DESC, id DESC").Limit(limit).Find(&ls).Error
	return ls, wrap("list leads", err)
}

// EachLead calls fn for every lead of an account matching f, newest first,
// reading rows as they stream so that an export of any size uses little
// memory. It stops at the first error fn returns.
func (s *Store) EachLead(ctx context.Context, accountID int64, f LeadFilter, fn func(models.Lead) error) error {
	rows, err := s.filterLeads(ctx, accountID, f).Order("created_at DESC, id DESC").Rows()
	if err != nil {
		return wrap("export leads", err)
	}
	defer rows.Close()
	for rows.Next() {
		var l models.Lead
		if err := s.db.ScanRows(rows, &l); err != nil {
			return wrap("export leads", err)
		}
		if err := fn(l); err != nil {
			return err
		}
	}
	return wrap("export leads", rows.Err())
}

// StageChanges lists a lead's stage history, oldest first.
func (s *Store) StageChanges(ctx context.Context, accountID, leadID int64) ([]models.StageChange, error) {
	var cs []models.StageChange
	err := s.q(ctx).Where("account_id = ? AND lead_id = ?", accountID, leadID).
		Order("occurred_at, id").Find(&cs).Error
	return cs, wrap("stage changes", err)
}

// CountLeads counts an account's leads matching f, but stops at limit:
// a page says "10,000+" rather than count a million leads on every view.
func (s *Store) CountLeads(ctx context.Context, accountID int64, f LeadFilter, limit int) (int64, error) {
	var n int64
	matching := s.filterLeads(ctx, accountID, f).Select("1").Limit(limit)
	err := s.q(ctx).Table("(?) AS matching", matching).Count(&n).Error
	return n, wrap("count leads", err)
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

func onlyDigits(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

package store

import (
	"cmp"
	"context"
	"slices"
	"strconv"

	"gorm.io/gorm"

	"github.com/leadsignal/leadsignal/models"
)

// Stage changes are recorded in batches: one for the lead page, the
// stage API's concurrent requests of an account together, a thousand rows
// of a CSV upload. A batch reads what deciding needs in one call
// (ReadStages), is decided in memory (internal/decide), and is written by
// ChangeLeads in one transaction.

// keyBatch bounds the values of one IN list.
const keyBatch = 1000

// eachChunk calls fn with vs, keyBatch at a time, until fn fails.
func eachChunk[T any](vs []T, fn func([]T) error) error {
	for start := 0; start < len(vs); start += keyBatch {
		if err := fn(vs[start:min(start+keyBatch, len(vs))]); err != nil {
			return err
		}
	}
	return nil
}

// leadKeyColumns are the columns LeadKey fields look leads up by.
var leadKeyColumns = map[string]string{
	"id": "id", "external_id": "external_id", "meta_lead_id": "meta_lead_id", "email": "email_hash", "phone": "phone_hash",
}

// leadKeyValue is lead l's value of a LeadKey field.
func leadKeyValue(l models.Lead, field string) string {
	switch field {
	case "id":
		return strconv.FormatInt(l.ID, 10)
	case "external_id":
		if l.ExternalID != nil {
			return *l.ExternalID
		}
	case "meta_lead_id":
		return l.MetaLeadID
	case "email":
		return l.EmailHash
	case "phone":
		return l.PhoneHash
	}
	return ""
}

// StageRead is what recording a batch of an account's stage changes
// reads (ReadStages).
type StageRead struct {
	Account  models.Account
	Datasets []models.Dataset
	// Rules are the account's send rules, in their order.
	Rules  []models.SendRule
	Stages []models.Stage
	// CRMLabels are the account's CRM connections' stage table rows that
	// map a label to a stage: aliases of those stages (name.NewStages).
	CRMLabels []models.CRMStage
	// Leads are the leads the keys find (LeadsByKeys).
	Leads map[LeadKey]models.Lead
	// Histories and Events are the leads' stage changes (junk markers
	// too, in the order they were recorded) and events, by lead id. The
	// events are read without their payloads, which deciding never
	// reads.
	Histories map[int64][]models.StageChange
	Events    map[int64][]models.Event
	// ChangeIDs are ids reserved for the batch's new stage changes.
	ChangeIDs []int64
}

// ReadStages reads what recording stage changes of an account's leads,
// found by keys, needs, and reserves reserve stage change ids (unused ones
// are simply skipped). On Postgres the reads are one round trip (reads).
func (s *Store) ReadStages(ctx context.Context, accountID int64, keys []LeadKey, reserve int) (StageRead, error) {
	r := StageRead{Leads: map[LeadKey]models.Lead{}, Histories: map[int64][]models.StageChange{}, Events: map[int64][]models.Event{}}
	rd := &reads{s: s, ctx: ctx, keep: true}
	var accounts []models.Account
	rd.find(s.q(ctx).Where("id = ?", accountID), &accounts, nil)
	rd.find(s.q(ctx).Where("account_id = ?", accountID).Order("lower(name), id"), &r.Datasets, nil)
	rd.find(s.q(ctx).Where("account_id = ?", accountID).Order("position, id"), &r.Rules, nil)
	rd.find(s.q(ctx).Where("account_id = ?", accountID).Order("position, id"), &r.Stages, nil)
	rd.find(s.q(ctx).Where("account_id = ? AND stage <> ''", accountID).Order("connection_id, position, crm_stage_id"), &r.CRMLabels, nil)
	// Each query has rows of its own (gorm's Find replaces a slice's
	// contents), gathered when it is done.
	leads := map[string][]models.Lead{}
	var changes []models.StageChange
	var events []shownEvent
	for field, values := range keyValues(keys) {
		_ = eachChunk(values, func(vs []string) error {
			var ls []models.Lead
			rd.find(s.leadsByKey(ctx, accountID, field, vs, "*"), &ls, func() { leads[field] = append(leads[field], ls...) })
			// The leads' rows are found by lead id alone (the ids are the
			// account's): an account's rows are many, and a plan that
			// started from them would read them all.
			ids := s.leadsByKey(ctx, accountID, field, vs, "id")
			var cs []models.StageChange
			rd.find(s.q(ctx).Where(s.anyOf("lead_id"), ids), &cs, func() { changes = append(changes, cs...) })
			var es []shownEvent
			rd.find(withStateOf(s.q(ctx).Model(&models.Event{}), decidedEventColumns).Where(s.anyOf("events.lead_id"), ids).
				Order("events.event_time, events.id"), &es, func() { events = append(events, es...) })
			return nil
		})
	}
	var reserved []changeID
	if reserve > 0 && s.dialect == "postgres" {
		rd.find(s.q(ctx).Raw(`SELECT nextval('stage_changes_id_seq') AS id FROM generate_series(1, ?)`, reserve), &reserved, nil)
	}
	if err := rd.run(); err != nil {
		return r, wrap("read stages", err)
	}
	if len(accounts) == 0 {
		return r, ErrNotFound
	}
	r.Account = accounts[0]
	for field, ls := range leads {
		for _, l := range ls {
			k := LeadKey{Field: field, Value: leadKeyValue(l, field)}
			if _, ok := r.Leads[k]; !ok {
				r.Leads[k] = l // the most recent lead of an email or phone
			}
		}
	}
	found := map[int64]bool{}
	for _, l := range r.Leads {
		found[l.ID] = true
	}
	// A lead found by two keys is read twice; each row is taken once.
	slices.SortFunc(changes, func(a, b models.StageChange) int { return cmp.Compare(a.ID, b.ID) })
	changes = slices.CompactFunc(changes, func(a, b models.StageChange) bool { return a.ID == b.ID })
	for _, c := range changes {
		if found[c.LeadID] {
			r.Histories[c.LeadID] = append(r.Histories[c.LeadID], c)
		}
	}
	seen := map[int64]bool{}
	for _, e := range shown(events, s.Now()) {
		if found[e.LeadID] && !seen[e.ID] {
			seen[e.ID] = true
			r.Events[e.LeadID] = append(r.Events[e.LeadID], e)
		}
	}
	switch {
	case reserve > 0 && s.dialect == "postgres":
		for _, c := range reserved {
			r.ChangeIDs = append(r.ChangeIDs, c.ID)
		}
	case reserve > 0:
		var err error
		if r.ChangeIDs, err = s.reserveSQLite(ctx, "stage_changes", reserve); err != nil {
			return r, wrap("read stages", err)
		}
	}
	return r, nil
}

// leadsByKey is the query of columns (the leads' columns, "*" for all)
// of the account's leads whose key field is one of values, newest first.
// On Postgres each value is one lookup of the field's own index, in a
// subquery in that index's order the planner may not turn into a join
// (OFFSET 0, as recentContactsSQL), so that the plan ReadStages keeps
// reads that index whatever the statistics it was made with: "IN" let a
// plan made on a table analyzed while empty read every lead of the
// account, on its own index, for each value.
func (s *Store) leadsByKey(ctx context.Context, accountID int64, field string, values []string, columns string) *gorm.DB {
	col := leadKeyColumns[field]
	if s.dialect != "postgres" {
		return s.q(ctx).Model(&models.Lead{}).Select(columns).Where("account_id = ? AND "+col+" IN ?", accountID, values).
			Order("created_at DESC, id DESC")
	}
	// inner finds one value's leads; outer keeps the account's.
	inner, outer := "account_id = ? AND "+col+" = k.v", ""
	switch field {
	case "id":
		// The key alone: with the account beside it, a plan made on a
		// table analyzed while empty read the account's leads on another
		// index (an id's order is no order the planner can prefer).
		inner, outer = "id = CAST(k.v AS bigint)", " WHERE l.account_id = ?"
	case "meta_lead_id":
		inner += " AND meta_lead_id <> ''" // its index's predicate
	case "email", "phone":
		inner += " ORDER BY created_at"
	}
	return s.q(ctx).Raw(`SELECT l.`+columns+` FROM unnest(CAST(? AS text[])) AS k(v)
	CROSS JOIN LATERAL (SELECT * FROM leads WHERE `+inner+` OFFSET 0) l`+outer+`
	ORDER BY l.created_at DESC, l.id DESC`, textArray(values), accountID)
}

// anyOf is the condition that column is one of a subquery's values: on
// Postgres over the subquery's array, which the planner reads first and
// then looks each value up in column's index.
func (s *Store) anyOf(column string) string {
	if s.dialect == "postgres" {
		return column + " = ANY(ARRAY(?))"
	}
	return column + " IN (?)"
}

// decidedEventColumns are the columns of the events deciding reads: all
// but the payload (prepared when an event is queued, sent as it is).
const decidedEventColumns = `events.id, events.account_id, events.dataset_id, events.lead_id, events.origin, events.origin_id,
	events.event_name, events.event_id, events.event_time, events.value, events.currency, events.action_source,
	events.test_event_code, events.stage_change_id, events.filled_in, events.lead_event_source, events.payload_stamp,
	events.created_at`

// changeID is a reserved stage change id.
type changeID struct{ ID int64 }

// keyValues are the values of keys by field, each once, of the fields
// leads are looked up by (an id that is not a number is none).
func keyValues(keys []LeadKey) map[string][]string {
	byField := map[string][]string{}
	seen := map[LeadKey]bool{}
	for _, k := range keys {
		if _, ok := leadKeyColumns[k.Field]; !ok || seen[k] {
			continue
		}
		if k.Field == "id" {
			if _, err := strconv.ParseInt(k.Value, 10, 64); err != nil {
				continue
			}
		}
		seen[k] = true
		byField[k.Field] = append(byField[k.Field], k.Value)
	}
	return byField
}

// StageHistories are the stage changes of an account's leads, junk
// markers too, by lead, in the order they were recorded.
func (s *Store) StageHistories(ctx context.Context, accountID int64, leadIDs []int64) (map[int64][]models.StageChange, error) {
	out := make(map[int64][]models.StageChange, len(leadIDs))
	err := eachChunk(leadIDs, func(ids []int64) error {
		var cs []models.StageChange
		err := s.q(ctx).Where("account_id = ? AND lead_id IN ?", accountID, ids).Order("id").Find(&cs).Error
		for _, c := range cs {
			out[c.LeadID] = append(out[c.LeadID], c)
		}
		return err
	})
	return out, wrap("stage histories", err)
}

// LeadsEvents are the events of an account's leads, by lead, in
// event_time order.
func (s *Store) LeadsEvents(ctx context.Context, accountID int64, leadIDs []int64) (map[int64][]models.Event, error) {
	out := make(map[int64][]models.Event, len(leadIDs))
	err := s.eventsBy(ctx, accountID, "lead_id", leadIDs, func(e models.Event) {
		out[e.LeadID] = append(out[e.LeadID], e)
	})
	return out, wrap("leads events", err)
}

// StageChangesEvents are the events queued for an account's stage
// changes, by change, in event_time order.
func (s *Store) StageChangesEvents(ctx context.Context, accountID int64, changeIDs []int64) (map[int64][]models.Event, error) {
	out := make(map[int64][]models.Event, len(changeIDs))
	err := s.eventsBy(ctx, accountID, "stage_change_id", changeIDs, func(e models.Event) {
		out[*e.StageChangeID] = append(out[*e.StageChangeID], e)
	})
	return out, wrap("stage changes events", err)
}

// eventsBy hands fn an account's events whose column (lead_id or
// stage_change_id) is one of ids, as people see them, in event_time order
// within each chunk of ids.
func (s *Store) eventsBy(ctx context.Context, accountID int64, column string, ids []int64, fn func(models.Event)) error {
	return eachChunk(ids, func(ids []int64) error {
		evs, err := findShown(withState(s.q(ctx).Model(&models.Event{})).
			Where("events.account_id = ? AND events."+column+" IN ?", accountID, ids).
			Order("events.event_time, events.id"), s.Now())
		for _, e := range evs {
			fn(e)
		}
		return err
	})
}

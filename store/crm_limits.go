package store

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/leadsignal/leadsignal/models"
)

// MaxWaitingCRMDeliveries is the most waiting deliveries a connection
// holds: past it the hook answers 429 and stores nothing (docs/crm.md,
// "Limits").
const MaxWaitingCRMDeliveries = 50000

// ErrInboxFull means the connection holds MaxWaitingCRMDeliveries waiting
// deliveries already.
var ErrInboxFull = errors.New("store: the connection holds the most waiting deliveries it may")

// CRMWaitingRoom is how many more waiting deliveries the connection may
// hold, out of limit: it counts the waiting ones up to limit on their
// partial index, so a full inbox costs one bounded index range, never a
// count of the whole inbox.
func (s *Store) CRMWaitingRoom(ctx context.Context, connectionID int64, limit int) (int, error) {
	var n int
	err := s.q(ctx).Raw(`SELECT COUNT(*) FROM (SELECT 1 FROM crm_deliveries WHERE connection_id = ? AND status = '`+
		string(models.DeliveryWaiting)+`' LIMIT ?) w`, connectionID, limit).Scan(&n).Error
	return max(limit-n, 0), wrap("crm waiting room", err)
}

// deliveryKeyColumn is the leads' column (as SQL over the alias l) that a
// delivery key of the kind is matched with: the columns the recorder
// finds a lead by (leadKeyColumns), the lead id as text.
func deliveryKeyColumn(kind string) string {
	if kind == "id" {
		return "CAST(l.id AS text)"
	}
	return "l." + leadKeyColumns[kind]
}

// waitingForLeadSQL is a delivery that waits for its lead, written out so
// that a generic plan can use the partial indexes on status = 'waiting'.
const waitingForLeadSQL = `status = '` + string(models.DeliveryWaiting) + `' AND waiting_for = '` + models.WaitingLead + `'`

// deliveryKeyKinds are the kinds of lookup keys, in a fixed order.
var deliveryKeyKinds = []string{"id", "external_id", "meta_lead_id", "email", "phone"}

// maxDeliveryKeyRows bounds the keys one INSERT writes: 4 bind parameters
// each.
const maxDeliveryKeyRows = 1000

// SetCRMDeliveryKeys records the lookup keys of deliveries the worker has
// just finished: those of ds that wait for their lead keep keys[id], by
// which a new lead wakes them (WakeCRMDeliveriesForLeads); the others
// keep none. Once the keys are committed, a delivery whose keys a lead
// has by now (one committed while it was tried) is due again at once, so
// a lead and its delivery crossing never wait for the backoff. It returns
// how many it made due.
func (s *Store) SetCRMDeliveryKeys(ctx context.Context, ds []models.CRMDelivery, keys map[int64][]LeadKey, now time.Time) (int, error) {
	if len(ds) == 0 {
		return 0, nil
	}
	ids := make([]int64, 0, len(ds))
	var rows []any
	var waiting []int64
	n := 0
	for _, d := range ds {
		ids = append(ids, d.ID)
		if d.Status != models.DeliveryWaiting || d.WaitingFor != models.WaitingLead {
			continue
		}
		seen := map[LeadKey]bool{}
		for _, k := range keys[d.ID] {
			if leadKeyColumns[k.Field] == "" || seen[k] {
				continue
			}
			seen[k] = true
			rows = append(rows, d.ID, d.AccountID, k.Field, k.Value)
			n++
		}
		if len(seen) > 0 {
			waiting = append(waiting, d.ID)
		}
	}
	err := s.Tx(ctx, func(tx *Store) error {
		if err := tx.q(ctx).Exec(`DELETE FROM crm_delivery_keys WHERE delivery_id IN ?`, ids).Error; err != nil {
			return err
		}
		for start := 0; start < n; start += maxDeliveryKeyRows {
			part := rows[start*4 : min(start+maxDeliveryKeyRows, n)*4]
			values := strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?), ", len(part)/4), ", ")
			if err := tx.q(ctx).Exec(`INSERT INTO crm_delivery_keys (delivery_id, account_id, kind, value) VALUES `+values, part...).Error; err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || len(waiting) == 0 {
		return 0, wrap("set crm delivery keys", err)
	}
	var found []string
	for _, kind := range deliveryKeyKinds {
		found = append(found, `k.kind = '`+kind+`' AND EXISTS (SELECT 1 FROM leads l WHERE l.account_id = k.account_id AND `+
			deliveryKeyColumn(kind)+` = k.value)`)
	}
	res := s.q(ctx).Exec(`UPDATE crm_deliveries SET next_try_at = ?
		WHERE id IN ? AND `+waitingForLeadSQL+` AND next_try_at > ?
		AND EXISTS (SELECT 1 FROM crm_delivery_keys k WHERE k.delivery_id = crm_deliveries.id AND ((`+
		strings.Join(found, `) OR (`)+`)))`, now.UTC(), waiting, now.UTC())
	return int(res.RowsAffected), wrap("set crm delivery keys", res.Error)
}

// LastLeadID is the id of the newest lead of every account, 0 when there
// is none.
func (s *Store) LastLeadID(ctx context.Context) (int64, error) {
	var id int64
	err := s.q(ctx).Raw(`SELECT COALESCE(MAX(id), 0) FROM leads`).Scan(&id).Error
	return id, wrap("last lead id", err)
}

// maxLeadIDs bounds the lead ids one statement of NewLeadIDs or
// WakeCRMDeliveriesForLeads takes.
const maxLeadIDs = 1000

// NewLeadIDs lists, in order, the ids of the leads in (after, upTo] and
// those of pending (ids the caller saw missing before) that exist now:
// the leads captured since the caller last looked.
func (s *Store) NewLeadIDs(ctx context.Context, after, upTo int64, pending []int64) ([]int64, error) {
	var ids []int64
	err := s.q(ctx).Raw(`SELECT id FROM leads WHERE id > ? AND id <= ? ORDER BY id`, after, upTo).Scan(&ids).Error
	if err != nil {
		return nil, wrap("new lead ids", err)
	}
	for start := 0; start < len(pending); start += maxLeadIDs {
		var found []int64
		part := pending[start:min(start+maxLeadIDs, len(pending))]
		if err := s.q(ctx).Raw(`SELECT id FROM leads WHERE id IN ?`, part).Scan(&found).Error; err != nil {
			return nil, wrap("new lead ids", err)
		}
		ids = append(ids, found...)
	}
	slices.Sort(ids)
	return ids, nil
}

// WakeCRMDeliveriesForLeads makes due now the deliveries that wait for
// their lead and whose lookup keys (SetCRMDeliveryKeys) one of the leads
// has. Each lead costs a few probes of the keys' index, however many
// deliveries wait.
func (s *Store) WakeCRMDeliveriesForLeads(ctx context.Context, leadIDs []int64, now time.Time) (int, error) {
	now = now.UTC()
	woken := 0
	for start := 0; start < len(leadIDs); start += maxLeadIDs {
		ids := leadIDs[start:min(start+maxLeadIDs, len(leadIDs))]
		var parts []string
		var args []any
		for _, kind := range deliveryKeyKinds {
			col := deliveryKeyColumn(kind)
			// The kinds are written in the statement, not bound: a
			// generic plan would not know one kind's keys from all of
			// them, and might read every key instead of probing the
			// index.
			parts = append(parts, `SELECT k.delivery_id FROM leads l JOIN crm_delivery_keys k
				ON k.account_id = l.account_id AND k.kind = '`+kind+`' AND k.value = `+col+`
				WHERE l.id IN ? AND `+col+` <> ''`)
			args = append(args, ids)
		}
		res := s.q(ctx).Exec(`UPDATE crm_deliveries SET next_try_at = ?
			WHERE `+waitingForLeadSQL+` AND next_try_at > ? AND id IN (`+strings.Join(parts, " UNION ALL ")+`)`,
			append([]any{now, now}, args...)...)
		if res.Error != nil {
			return woken, wrap("wake crm deliveries", res.Error)
		}
		woken += int(res.RowsAffected)
	}
	return woken, nil
}

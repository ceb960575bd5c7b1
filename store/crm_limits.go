package store

import (
	"context"
	"errors"
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
	err := s.q(ctx).Raw(`SELECT COUNT(*) FROM (SELECT 1 FROM crm_deliveries WHERE connection_id = ? AND status = ? LIMIT ?) w`,
		connectionID, models.DeliveryWaiting, limit).Scan(&n).Error
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
	args := []any{}
	for _, kind := range deliveryKeyKinds {
		found = append(found, `SELECT 1 FROM leads l WHERE l.account_id = k.account_id AND `+deliveryKeyColumn(kind)+` = k.value AND k.kind = ?`)
		args = append(args, kind)
	}
	res := s.q(ctx).Exec(`UPDATE crm_deliveries SET next_try_at = ?
		WHERE id IN ? AND status = ? AND waiting_for = ? AND next_try_at > ?
		AND EXISTS (SELECT 1 FROM crm_delivery_keys k WHERE k.delivery_id = crm_deliveries.id AND (EXISTS (`+
		strings.Join(found, `) OR EXISTS (`)+`)))`,
		append([]any{now.UTC(), waiting, models.DeliveryWaiting, models.WaitingLead, now.UTC()}, args...)...)
	return int(res.RowsAffected), wrap("set crm delivery keys", res.Error)
}

// LastLeadID is the id of the newest lead of every account, 0 when there
// is none: where WakeCRMDeliveriesForLeads starts.
func (s *Store) LastLeadID(ctx context.Context) (int64, error) {
	var id int64
	err := s.q(ctx).Raw(`SELECT COALESCE(MAX(id), 0) FROM leads`).Scan(&id).Error
	return id, wrap("last lead id", err)
}

// WakeCRMDeliveriesForLeads makes due now the deliveries that wait for
// their lead and whose lookup keys (SetCRMDeliveryKeys) a lead with an id
// in (after, upTo] has: the leads captured since the caller last looked.
// Each new lead costs a few probes of the keys' index, however many
// deliveries wait.
func (s *Store) WakeCRMDeliveriesForLeads(ctx context.Context, after, upTo int64, now time.Time) (int, error) {
	if upTo <= after {
		return 0, nil
	}
	now = now.UTC()
	var parts []string
	var args []any
	for _, kind := range deliveryKeyKinds {
		col := deliveryKeyColumn(kind)
		parts = append(parts, `SELECT k.delivery_id FROM leads l JOIN crm_delivery_keys k
			ON k.account_id = l.account_id AND k.kind = ? AND k.value = `+col+`
			WHERE l.id > ? AND l.id <= ? AND `+col+` <> ''`)
		args = append(args, kind, after, upTo)
	}
	res := s.q(ctx).Exec(`UPDATE crm_deliveries SET next_try_at = ?
		WHERE status = ? AND waiting_for = ? AND next_try_at > ? AND id IN (`+strings.Join(parts, " UNION ALL ")+`)`,
		append([]any{now, models.DeliveryWaiting, models.WaitingLead, now}, args...)...)
	return int(res.RowsAffected), wrap("wake crm deliveries", res.Error)
}

package upkeep_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/leadsignal/leadsignal/internal/upkeep"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// The backfill's loop runs until every backfill is done, says so once, and
// ends; run again, it ends at once and says nothing.
func TestBackfillEnds(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		var log bytes.Buffer
		if err := upkeep.Backfill(s, slog.New(slog.NewJSONHandler(&log, nil))).Run(t.Context()); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if !strings.Contains(log.String(), `"msg":"backfilled","backfill":"0016_lead_phone_country","leads":0`) {
			t.Errorf("log = %s; want backfilled", log.String())
		}
		log.Reset()
		if err := upkeep.Backfill(s, slog.New(slog.NewJSONHandler(&log, nil))).Run(t.Context()); err != nil || log.Len() != 0 {
			t.Errorf("Run again = %v, log %q; want nil and nothing logged", err, log.String())
		}
	})
}

// The statistics' loop ends once every hot table has statistics: at once
// on SQLite, which needs none.
func TestStatsEndsOnSQLite(t *testing.T) {
	if err := upkeep.Stats(storetest.New(t), slog.New(slog.DiscardHandler)).Run(t.Context()); err != nil {
		t.Fatalf("Run = %v", err)
	}
}

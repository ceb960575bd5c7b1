package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// doorChange is a stage change as every way in can carry it.
type doorChange struct {
	email    string
	stage    string
	at       time.Time
	value    string // "" for none
	currency string
}

// A rule of accepting a stage change is decided in one place (the
// recorder, internal/decide), so a change gets the same outcome through
// every way in: the stage API, a CSV upload, a CRM connection's delivery
// and the lead page. Where a way in differs, it is by the recorder's
// rule for its origin: a CRM's clock is moved rather than refused, and
// its Purchase without a value is recorded and held back; a person picks
// a junk verdict, which no system may send.
func TestOneDoorForEveryStageChange(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		st := newStageSetup(t, a, s)
		b := a.browser()
		b.login("crm-owner@example.com")
		const secret = "one-door-generic-secret"
		conn := a.connection(st.acc, crm.Generic, "Zapier", secret, "")
		nextLead := 0
		// lead captures a lead of its own for one rule and door, two days
		// before the app's clock.
		lead := func() (int64, string) {
			nextLead++
			email := fmt.Sprintf("door-%d@example.com", nextLead)
			r := a.postLead(st.key, fmt.Sprintf(`{"external_id":"door-%d","email":%q,"created_at":%q}`, nextLead, email, st.at.Format(time.RFC3339)))
			if r.status != http.StatusCreated {
				t.Fatalf("post lead = %d %s", r.status, r.raw)
			}
			return r.LeadID, email
		}
		// recorded says how the lead's newest stage change was recorded.
		recorded := func(leadID int64) string {
			cs, err := s.StageChanges(t.Context(), st.acc.ID, leadID)
			if err != nil || len(cs) == 0 {
				return "nothing recorded"
			}
			c := cs[len(cs)-1]
			out := "recorded " + c.Stage
			if !c.OccurredAt.Equal(st.at.Add(46 * time.Hour)) {
				out += " at " + c.OccurredAt.UTC().Format(time.RFC3339)
			}
			for _, e := range a.stageEvents(st.acc, leadID) {
				if e.EventName == "Purchase" && e.Status == models.EventFailed {
					out += "; Purchase held back"
				}
			}
			return out
		}
		doors := map[string]func(c doorChange, leadID int64) string{
			"api": func(c doorChange, leadID int64) string {
				body := map[string]any{"lead": map[string]string{"email": c.email}, "stage": c.stage, "occurred_at": c.at.Format(time.RFC3339)}
				if c.value != "" {
					body["value"] = json.Number(c.value)
				}
				if c.currency != "" {
					body["currency"] = c.currency
				}
				raw, _ := json.Marshal(body)
				r := a.postStage(st.key, string(raw))
				if r.status >= 400 {
					return "refused " + r.Error.Field + ": " + r.Error.Message
				}
				return recorded(leadID)
			},
			"upload": func(c doorChange, leadID int64) string {
				file := "Email Address,Deal Stage,Close Date,Amount,Currency Code\r\n" +
					fmt.Sprintf("%s,%s,%s,%s,%s\r\n", c.email, c.stage, c.at.Format("2006-01-02 15:04"), c.value, c.currency)
				id := uploadID(t, b.uploadFile(st.acc, "deals.csv", []byte(file), true))
				u := waitUpload(t, s, st.acc, id, models.UploadPreviewed)
				page := stagesURL(st.acc, "/uploads/"+itoa(id))
				if problems := uploadProblems(b.get(page)); len(problems) > 0 {
					_, p, _ := strings.Cut(problems[0], " ") // the row number
					return "refused " + p
				}
				wantStatus(t, "apply", b.post(page+"/apply", url.Values{"pass": {itoa(int64(u.Pass))}}), http.StatusSeeOther)
				waitUpload(t, s, st.acc, id, models.UploadDone)
				return recorded(leadID)
			},
			"crm": func(c doorChange, leadID int64) string {
				body := map[string]any{"email": c.email, "stage": c.stage, "occurred_at": c.at.Unix(), "change_id": fmt.Sprintf("d-%d", leadID)}
				if c.value != "" {
					body["value"] = json.Number(c.value)
				}
				if c.currency != "" {
					body["currency"] = c.currency
				}
				raw, _ := json.Marshal(body)
				if r := a.postHook("/hooks/generic/"+conn.Token, raw, "Authorization", "Bearer "+secret); r.status != http.StatusOK || r.Stored != 1 {
					t.Fatalf("post hook = %d %s", r.status, r.raw)
				}
				a.work()
				d := a.deliveries(st.acc, conn)[0]
				switch {
				case d.Status == models.DeliveryDone:
					return recorded(leadID)
				case d.WaitingFor == models.WaitingLead:
					return "waits for its lead"
				}
				return "waits: " + d.Reason
			},
			"lead page": func(c doorChange, leadID int64) string {
				r := b.post(views.AccountURL(st.acc.ID, fmt.Sprintf("/leads/%d/stages", leadID)),
					url.Values{"stage": {c.stage}, "value": {c.value}, "currency": {c.currency}})
				if r.status == http.StatusUnprocessableEntity {
					for _, field := range []string{"stage", "value", "currency"} {
						if msg := r.text("error-" + field); msg != "" {
							return "refused " + field + ": " + msg
						}
					}
				}
				wantStatus(t, "lead page stage", r, http.StatusSeeOther)
				return recorded(leadID)
			},
		}
		at := st.at.Add(46 * time.Hour) // before the app's clock, within Meta's week
		before := st.at.Add(-time.Hour)
		future := a.clock().Add(24 * time.Hour).UTC().Truncate(time.Minute)
		beforeMsg := fmt.Sprintf("occurred_at is before the lead was captured (%s): a stage change cannot come first", st.at.Format(time.RFC3339))
		// The upload names the file's columns and cells, and shows times in
		// the account's zone (UTC here).
		uploadBeforeMsg := fmt.Sprintf("refused Close Date: Close Date %q is before the lead was captured (%s)",
			before.Format("2006-01-02 15:04"), st.at.Format("Jan 2, 2006 3:04 PM MST"))
		purchaseMsg := "stage won sends a Purchase, which needs the deal's value: send value (and currency)"
		junkMsg := "stage: junk is a person's verdict, set on the lead page; it is not a CRM stage"
		sources := map[string]string{
			"api": `by the stage API with the key "website"`, "upload": "(deals.csv, row 2)",
			"crm": `from the CRM connection "Zapier", delivery #`, "lead page": "by crm-owner@example.com",
		}
		for _, tt := range []struct {
			rule   string
			change doorChange
			// want is each door's outcome; a door the rule cannot reach
			// (the lead page's time is always now) is left out.
			want map[string]string
		}{
			{"a stage is the account's, matched ignoring case", doorChange{stage: "QUALIFIED", at: at}, map[string]string{
				"api": "recorded qualified", "upload": "recorded qualified", "crm": "recorded qualified", "lead page": "recorded qualified at 2026-12-01T12:00:00Z"}},
			{"the lead must be the account's", doorChange{email: "nobody@example.com", stage: "qualified", at: at}, map[string]string{
				"api":    "refused lead.email: no lead of this account has this email",
				"upload": "refused Email Address: Email Address nobody@example.com: no lead of this account has this email",
				"crm":    "waits for its lead"}},
			{"a change cannot come before its lead; a CRM's clock is moved", doorChange{stage: "qualified", at: before}, map[string]string{
				"api": "refused occurred_at: " + beforeMsg, "upload": uploadBeforeMsg,
				"crm": "recorded qualified at " + st.at.Add(time.Second).Format(time.RFC3339)}},
			{"a change cannot be in the future; a CRM's is taken as now", doorChange{stage: "qualified", at: future}, map[string]string{
				"api":    "refused occurred_at: occurred_at is in the future",
				"upload": fmt.Sprintf("refused Close Date: Close Date %q is in the future", future.Format("2006-01-02 15:04")),
				"crm":    "recorded qualified at now"}},
			{"a Purchase needs its value; a CRM's is held back", doorChange{stage: "won", at: at}, map[string]string{
				"api": "refused value: " + purchaseMsg, "upload": "refused Amount: Amount is empty: " + purchaseMsg,
				"crm": "recorded won; Purchase held back", "lead page": "refused value: S" + purchaseMsg[1:] + "."}},
			{"a value's currency is ISO 4217", doorChange{stage: "won", at: at, value: "100", currency: "EURO"}, map[string]string{
				"api":    `refused currency: currency must be an ISO 4217 code like USD or EUR, not "EURO"`,
				"upload": `refused Currency Code: Currency Code EURO must be an ISO 4217 code like USD or EUR, not "EURO"`,
				"crm":    `waits: the stage change cannot be recorded: currency must be an ISO 4217 code like USD or EUR, not "EURO"`,
				// The lead page's currency is a list of codes.
				"lead page": `refused currency: Currency must be an ISO 4217 code like USD or EUR, not "EURO".`}},
			{"junk is a person's verdict", doorChange{stage: "junk", at: at}, map[string]string{
				"api": "refused stage: " + junkMsg, "upload": "refused Deal Stage: Deal Stage junk: " + strings.TrimPrefix(junkMsg, "stage: "),
				"crm": "waits: the stage change cannot be recorded: " + junkMsg, "lead page": "recorded junk at 2026-12-01T12:00:00Z"}},
		} {
			for _, door := range []string{"api", "upload", "crm", "lead page"} {
				want, ok := tt.want[door]
				if !ok {
					continue
				}
				leadID, email := lead()
				c := tt.change
				if c.email == "" {
					c.email = email
				}
				got := doors[door](c, leadID)
				if want == "recorded qualified at now" && strings.HasPrefix(got, "recorded qualified at ") {
					recordedAt, err := time.Parse(time.RFC3339, strings.TrimPrefix(got, "recorded qualified at "))
					if err == nil && a.clock().Sub(recordedAt) < time.Minute {
						got = want
					}
				}
				if got != want {
					t.Errorf("%s, through the %s:\n got %s\nwant %s", tt.rule, door, got, want)
				}
				// The lead page says where each recorded change came from.
				if source := sources[door]; strings.HasPrefix(got, "recorded") && source != "" {
					page := b.get(views.AccountURL(st.acc.ID, fmt.Sprintf("/leads/%d", leadID)))
					item := page.doc.Find(`[data-testid="timeline-stage"]`).Last()
					if text := item.Text(); !strings.Contains(text, source) {
						t.Errorf("%s, through the %s: the lead page's change reads %q; want it to say %q", tt.rule, door, text, source)
					}
					// An upload's and a delivery's change links to where it came from.
					if href, _ := item.Find("a.detail").Attr("href"); door == "upload" || door == "crm" {
						page, anchor, _ := strings.Cut(href, "#")
						target := b.get(page)
						if href == "" || target.status != http.StatusOK || (door == "crm" && target.doc.Find("#"+anchor).Length() != 1) {
							t.Errorf("%s, through the %s: the change's link %q answers %d without its row", tt.rule, door, href, target.status)
						}
					}
				}
			}
		}
	})
}

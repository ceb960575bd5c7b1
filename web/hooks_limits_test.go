package web_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leadsignal/leadsignal/internal/crm"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
)

// postGeneric posts body to c's hook signed with secret at the app's clock.
func (a *app) postGeneric(c models.CRMConnection, secret string, body []byte) hookReply {
	a.t.Helper()
	return a.postHook("/hooks/generic/"+c.Token, body, crm.GenericHeader, crm.SignGeneric(secret, a.clock(), body))
}

// A change whose body is over 64 KiB is answered 413, naming the limit,
// and nothing of its delivery is stored; one just under it is stored.
func TestHookChangeBodyLimit(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, _ := a.ingestAccount("acme", "US")
		const secret = "generic-secret-0123456789"
		c := a.connection(acc, crm.Generic, "Zapier", secret, "")
		change := func(id string, pad int) string {
			return fmt.Sprintf(`{"email":"ada@example.com","stage":"won","change_id":%q,"note":%q}`, id, strings.Repeat("x", pad))
		}
		big := "[" + change("small", 10) + "," + change("big", 70<<10) + "]"
		r := a.postGeneric(c, secret, []byte(big))
		if r.status != http.StatusRequestEntityTooLarge || r.Error.Code != "change_too_large" ||
			!strings.Contains(r.Error.Message, "65536") || !strings.Contains(r.Error.Message, "change 2") {
			t.Errorf("a 70 KiB change = %d %s; want 413 change_too_large naming 65536 bytes and change 2", r.status, r.raw)
		}
		if ds := a.deliveries(acc, c); len(ds) != 0 {
			t.Errorf("stored %d deliveries of a refused delivery; want none", len(ds))
		}
		// Escapes count as stored: a body of 64 KiB less its frame fits.
		fits := change("fits", 64<<10-200)
		if r := a.postGeneric(c, secret, []byte(fits)); r.status != http.StatusOK || r.Stored != 1 {
			t.Errorf("a change just under 64 KiB = %d %s; want stored", r.status, r.raw)
		}
	})
}

// A connection with 50,000 deliveries waiting takes no more: 429 with
// Retry-After, nothing stored; another connection of the account still
// takes its own.
func TestHookInboxFull(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a := newApp(t, s)
		acc, _ := a.ingestAccount("acme", "US")
		const secret = "generic-secret-0123456789"
		c := a.connection(acc, crm.Generic, "Zapier", secret, "")
		other := a.connection(acc, crm.Generic, "Other", secret, "")
		ds := make([]models.CRMDelivery, store.MaxWaitingCRMDeliveries)
		for i := range ds {
			ds[i] = models.CRMDelivery{AccountID: acc.ID, ConnectionID: c.ID, Key: "k" + strconv.Itoa(i), Body: "{}",
				ReceivedAt: a.clock(), OccurredAt: a.clock(), CRMStageID: "won"}
		}
		if _, err := s.AddCRMDeliveries(t.Context(), ds); err != nil {
			t.Fatal(err)
		}
		body := []byte(`{"email":"ada@example.com","stage":"won","change_id":"one-more"}`)
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, a.srv.URL+"/hooks/generic/"+c.Token, strings.NewReader(string(body)))
		req.Header.Set(crm.GenericHeader, crm.SignGeneric(secret, a.clock(), body))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
			t.Errorf("a delivery to a full inbox = %d, Retry-After %q; want 429 with Retry-After", res.StatusCode, res.Header.Get("Retry-After"))
		}
		if r := a.postGeneric(c, secret, body); r.Error.Code != "inbox_full" || !strings.Contains(r.Error.Message, "50000") {
			t.Errorf("full inbox answer = %s; want inbox_full naming 50000", r.raw)
		}
		room, err := s.CRMWaitingRoom(t.Context(), c.ID, store.MaxWaitingCRMDeliveries+10)
		if err != nil || room != 10 {
			t.Errorf("room past the limit = %d, %v; want 10: nothing stored", room, err)
		}
		if r := a.postGeneric(other, secret, body); r.status != http.StatusOK || r.Stored != 1 {
			t.Errorf("another connection = %d %s; want stored", r.status, r.raw)
		}
	})
}

// More than 20 failed authentications in a minute on a connection are
// answered 429 unchecked, even with the right signature, until the minute
// has passed; other connections are not held back. The connection's page
// says how many failed in the last hour.
func TestHookFailedAuthThrottle(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		f := newRulesFixture(t, s)
		a := f.a
		const secret = "generic-secret-0123456789"
		c := a.connection(f.acc, crm.Generic, "Zapier", secret, "")
		other := a.connection(f.acc, crm.Generic, "Other", secret, "")
		body := []byte(`{"email":"ada@example.com","stage":"won","change_id":"c1"}`)
		for i := range 20 {
			if r := a.postGeneric(c, "wrong-secret-0123456789", body); r.status != http.StatusUnauthorized {
				t.Fatalf("wrong signature %d = %d %s; want 401", i+1, r.status, r.raw)
			}
		}
		for _, sec := range []string{"wrong-secret-0123456789", secret} {
			if r := a.postGeneric(c, sec, body); r.status != http.StatusTooManyRequests || r.Error.Code != "too_many_failures" {
				t.Errorf("after 20 failures, signed with %q = %d %s; want 429 too_many_failures", sec, r.status, r.raw)
			}
		}
		if r := a.postGeneric(other, secret, body); r.status != http.StatusOK {
			t.Errorf("another connection = %d %s; want 200", r.status, r.raw)
		}
		line := f.b.get(crmPageURL(f.acc, c, "")).text("crm-signins")
		if !strings.Contains(line, "20 failed sign-ins in the last hour, last at") || !strings.Contains(line, "2 more deliveries refused unchecked") {
			t.Errorf("page says %q; want 20 failed sign-ins and 2 more refused", line)
		}
		if line := f.b.get(crmPageURL(f.acc, other, "")).text("crm-signins"); line != "" {
			t.Errorf("the other connection's page says %q; want nothing", line)
		}
		a.advance(61 * time.Second)
		if r := a.postGeneric(c, secret, body); r.status != http.StatusOK || r.Stored != 1 {
			t.Errorf("a minute later, signed = %d %s; want stored", r.status, r.raw)
		}
		a.advance(time.Hour)
		if line := f.b.get(crmPageURL(f.acc, c, "")).text("crm-signins"); line != "" {
			t.Errorf("an hour later the page says %q; want nothing", line)
		}
	})
}

// The connection page shows a delivery's body folded to its first 2 KB,
// with a link to the whole, which is served as text to the account's
// editors only: 404 from another account, or through another connection.
func TestCRMDeliveryBodyFolded(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := t.Context()
		f := newRulesFixture(t, s)
		c := f.a.connection(f.acc, crm.Generic, "Zapier", "generic-secret-0123456789", "")
		mine2 := f.a.connection(f.acc, crm.Generic, "Second", "generic-secret-0123456789", "")
		long := `{"stage":"won","note":"` + strings.Repeat("é<>&", 3000) + `"}`
		ds := []models.CRMDelivery{
			{AccountID: f.acc.ID, ConnectionID: c.ID, Key: "long", Body: long, ReceivedAt: f.a.clock(), OccurredAt: f.a.clock()},
			{AccountID: f.acc.ID, ConnectionID: c.ID, Key: "short", Body: `{"stage":"won"}`, ReceivedAt: f.a.clock().Add(time.Second), OccurredAt: f.a.clock()},
		}
		if _, err := s.AddCRMDeliveries(ctx, ds); err != nil {
			t.Fatal(err)
		}
		r := f.b.get(crmPageURL(f.acc, c, ""))
		if r.status != http.StatusOK {
			t.Fatalf("page = %d", r.status)
		}
		if len(r.body) > 64<<10 {
			t.Errorf("page is %d bytes; want the long body folded", len(r.body))
		}
		rows := r.doc.Find(`[data-testid="crm-delivery"]`)
		short, folded := rows.Eq(0), rows.Eq(1)
		if got := short.Find(`[data-testid="crm-delivery-body"]`).Text(); !strings.Contains(got, `"stage": "won"`) ||
			short.Find(`[data-testid="crm-delivery-whole"]`).Length() != 0 {
			t.Errorf("short body = %q, with a link: %v; want it whole, no link", got, short.Find(`[data-testid="crm-delivery-whole"]`).Length() != 0)
		}
		shown := folded.Find(`[data-testid="crm-delivery-body"]`).Text()
		if len(shown) > 2048+10 || !strings.HasSuffix(shown, "…") || !strings.Contains(shown, "é<>&") {
			t.Errorf("folded body is %d bytes, ends %q; want its first 2 KB and …", len(shown), shown[max(len(shown)-10, 0):])
		}
		link, ok := folded.Find(`[data-testid="crm-delivery-whole"]`).Attr("href")
		if !ok {
			t.Fatalf("no link to the whole body in %s", folded.Text())
		}
		whole := f.b.get(link)
		if whole.status != http.StatusOK || whole.body != long || !strings.HasPrefix(whole.header.Get("Content-Type"), "text/plain") ||
			whole.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("whole body = %d %q, %d bytes; want 200 text/plain nosniff, the body as stored", whole.status, whole.header.Get("Content-Type"), len(whole.body))
		}
		id := itoa(ds[0].ID)
		if r := f.b.get(crmPageURL(f.acc, mine2, "/deliveries/"+id+"/body")); r.status != http.StatusNotFound {
			t.Errorf("the body through another connection = %d; want 404", r.status)
		}
		for _, bad := range []string{"abc", "0", "99999999"} {
			if r := f.b.get(crmPageURL(f.acc, c, "/deliveries/"+bad+"/body")); r.status != http.StatusNotFound {
				t.Errorf("body of delivery %s = %d; want 404", bad, r.status)
			}
		}
		// Another account's editor gets 404 for this delivery, through
		// their own connection or this one.
		other := f.a.user("bo@example.com", false)
		beta := f.a.account("beta", other)
		theirs := f.a.connection(beta, crm.Generic, "Theirs", "generic-secret-0123456789", "")
		if r := f.b.get(crmPageURL(beta, theirs, "/deliveries/"+id+"/body")); r.status != http.StatusNotFound && r.status != http.StatusForbidden {
			t.Errorf("through another account's URL = %d; want 404 or 403", r.status)
		}
		ob := f.a.browser()
		ob.login("bo@example.com")
		if r := ob.get(crmPageURL(beta, theirs, "/deliveries/"+id+"/body")); r.status != http.StatusNotFound {
			t.Errorf("another account's owner, through their connection = %d; want 404", r.status)
		}
		if r := ob.get(crmPageURL(f.acc, c, "/deliveries/"+id+"/body")); r.status == http.StatusOK {
			t.Errorf("another account's owner, through this account = %d; want refused", r.status)
		}
	})
}

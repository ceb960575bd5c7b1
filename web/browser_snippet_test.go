//go:build browser

package web_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/leadsignal/leadsignal/internal/poll"
	"github.com/leadsignal/leadsignal/models"
	"github.com/leadsignal/leadsignal/store"
	"github.com/leadsignal/leadsignal/store/storetest"
	"github.com/leadsignal/leadsignal/views"
)

// captureSite is a website with the snippet: a landing page whose form
// navigates to /thanks on submit, one whose form posts by XHR and stays,
// and a stub fbq that keeps its calls in localStorage.
func captureSite(t *testing.T, appURL string, key func() string) *httptest.Server {
	t.Helper()
	head := `<!doctype html><html><head><meta charset="utf-8"><title>Northwind</title>
<script>window.fbq=function(){var c=JSON.parse(localStorage.getItem("fbq")||"[]");c.push(Array.prototype.slice.call(arguments));localStorage.setItem("fbq",JSON.stringify(c));};</script>
</head><body>`
	snippet := func() string {
		return `<script src="` + appURL + `/capture.js" data-key="` + key() + `" async></script></body></html>`
	}
	form := `<label>Name <input id="name" name="first_name"></label>
<label>Email <input id="email" type="email" name="email"></label>
<label>Phone <input id="phone" type="tel" name="phone"></label>
<label>Budget <select id="budget" name="budget"><option>small</option><option selected>large</option></select></label>
<label>Password <input id="pw" type="password" name="password"></label>
<button id="send" type="submit">Get a quote</button>`
	mux := http.NewServeMux()
	mux.HandleFunc("/landing", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, head+`<form id="quote" method="post" action="/thanks">`+form+`</form>`+snippet())
	})
	mux.HandleFunc("/xhr", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, head+`<form id="quote">`+form+`</form><p id="done" hidden>Thanks!</p>
<script>document.getElementById("quote").addEventListener("submit",function(e){e.preventDefault();
fetch("/submit",{method:"POST"}).then(function(){document.getElementById("done").hidden=false;});});
window.addEventListener("load",function(){leadsignal.onLead(function(l){window.__lead=l;});});</script>`+snippet())
	})
	mux.HandleFunc("/thanks", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><html><body><h1 id="thanks">Thanks!</h1></body></html>`)
	})
	mux.HandleFunc("/submit", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestBrowserCaptureSnippet: a visitor lands from a Meta ad, types an
// email and leaves the field, and a partial lead appears; they send the
// form, which navigates away, and the same lead is complete, with the ad's
// fbc from the landing time; the page's pixel got the Lead with the
// server event's id for each pixel, the one Meta's fake receives. A form
// that posts by XHR gets its lead through leadsignal.onLead. A page of an
// origin the key does not allow sends nothing. No JavaScript error.
func TestBrowserCaptureSnippet(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	f := newRulesFixture(t, s)
	live := f.a.dataset(f.acc, models.ModeLive, f.a.clock())
	var key string
	site := captureSite(t, f.a.srv.URL, func() string { return key })
	foreign := strings.Replace(site.URL, "127.0.0.1", "localhost", 1)

	// The owner adds the website on the Site snippet section and copies
	// its snippet.
	b := chrome(t)
	b.login(f.a.srv.URL, "acme-owner@example.com")
	section := f.a.srv.URL + views.SettingsURL(f.acc.ID, views.SettingsSite)
	b.do(chromedp.Navigate(section), visible(`[data-testid="site-key-form"]`),
		typeInto(`#f-name`, "Northwind website"), typeInto(`#f-origin`, site.URL+"/landing"),
		click(`[data-testid="create-site-key"]`), visible(`[data-testid="site-snippet"]`))
	snippet := b.text(`[data-testid="site-snippet"]`)
	if !strings.Contains(snippet, f.a.srv.URL+`/capture.js"`) {
		t.Errorf("snippet %q; want it to load %s/capture.js", snippet, f.a.srv.URL)
	}
	key = b.text(`[data-testid="site-key-value"]`)
	if !strings.Contains(snippet, `data-key="`+key+`"`) || b.text(`[data-testid="site-origin"] code`) != site.URL {
		t.Fatalf("snippet %q, origin %q; want the key and %s", snippet, b.text(`[data-testid="site-origin"] code`), site.URL)
	}

	var mu sync.Mutex
	var jsErrors []string
	if err := chromedp.Listen(b.ctx, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			mu.Lock()
			d := e.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			jsErrors = append(jsErrors, fmt.Sprintf("%s:%d: %s", d.URL, d.LineNumber, msg))
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	leadBy := func(email string, partial bool) models.Lead {
		t.Helper()
		return snippetLead(t, f, func(l models.Lead) bool { return l.Email == email && l.Partial == partial })
	}

	landed := time.Now()
	b.do(chromedp.Navigate(site.URL+"/landing?fbclid=IwAR_snippet123&gclid=G-1"), visible(`#email`))
	b.waitJS("the snippet", `window.leadsignal`)
	b.do(typeInto(`#email`, "jane@northwind.example"), click(`#name`))
	partial := leadBy("jane@northwind.example", true)
	if partial.ExternalID == nil || !strings.HasPrefix(*partial.ExternalID, "ls_") || len(*partial.ExternalID) != 35 {
		t.Errorf("external_id %v; want ls_ and 128 bits in hex", partial.ExternalID)
	}
	var ms int64
	if _, err := fmt.Sscanf(partial.FBC, "fb.1.%d.IwAR_snippet123", &ms); err != nil || ms < landed.Add(-time.Minute).UnixMilli() || ms > time.Now().UnixMilli() {
		t.Errorf("fbc %q; want fb.1.<the landing time in ms>.IwAR_snippet123", partial.FBC)
	}

	// A person takes a few seconds over a form: faster is junk (too_fast).
	b.do(typeInto(`#name`, "Jane"), typeInto(`#phone`, "(415) 692-4281"), typeInto(`#pw`, "hunter2"),
		chromedp.Sleep(2200*time.Millisecond), click(`#send`), visible(`#thanks`))
	complete := leadBy("jane@northwind.example", false)
	if complete.ID != partial.ID {
		t.Errorf("the complete lead is %d; want the partial one, %d, completed", complete.ID, partial.ID)
	}
	if n := f.a.leadCount(f.acc); n != 1 {
		t.Errorf("%d leads; want 1", n)
	}
	if complete.Junk {
		t.Errorf("the lead is junk: %s", complete.JunkReasons)
	}
	if complete.FirstName != "Jane" || complete.Phone == "" || complete.FillSeconds == nil || *complete.FillSeconds < 2 {
		t.Errorf("lead: first name %q, phone %q, fill seconds %v", complete.FirstName, complete.Phone, complete.FillSeconds)
	}
	var fields map[string]string
	if err := json.Unmarshal([]byte(complete.Fields), &fields); err != nil {
		t.Fatalf("fields %q: %v", complete.Fields, err)
	}
	if fields["gclid"] != "G-1" || fields["budget"] != "large" || fields["password"] != "" {
		t.Errorf("custom fields %v; want the landing's gclid and the budget, never the password", fields)
	}

	// The pixel's Lead carried each pixel's event id, the server's.
	calls := evalJS[[][]any](b, `JSON.parse(localStorage.getItem("fbq")||"[]")`)
	ids := pixelEventIDs(t, calls)
	evs, err := s.LeadEvents(t.Context(), f.acc.ID, complete.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []models.Dataset{f.d, live} {
		var id string
		for _, e := range evs {
			if e.EventName == "Lead" && e.DatasetID == d.ID {
				id = e.EventID
			}
		}
		if id == "" || ids[d.PixelID] != id {
			t.Errorf("pixel %s: the page's Lead eventID %q; the server's event %q", d.PixelID, ids[d.PixelID], id)
		}
	}
	f.a.drain()
	sent := ""
	for _, r := range f.a.meta.Requests() {
		for _, e := range r.Events {
			if r.PixelID == live.PixelID && e["event_name"] == "Lead" {
				sent, _ = e["event_id"].(string)
			}
		}
	}
	if sent == "" || sent != ids[live.PixelID] {
		t.Errorf("Meta's fake got the Lead with event_id %q; the page's pixel %q", sent, ids[live.PixelID])
	}

	// A form that posts by XHR: the page stays and hears of its lead.
	// An _fbc cookie of an older click: the landing's newer fbclid wins.
	b.do(chromedp.Evaluate[chromedp.Void](`localStorage.removeItem("fbq"); document.cookie = "_fbc=fb.1.1700000000000.IwAR_older; path=/"`),
		chromedp.Navigate(site.URL+"/xhr"), visible(`#email`))
	b.waitJS("the snippet", `window.leadsignal`)
	b.do(typeInto(`#email`, "bob@northwind.example"), chromedp.Sleep(2200*time.Millisecond), click(`#send`), visible(`#done`))
	b.waitJS("the lead's reply", `window.__lead`)
	xhr := leadBy("bob@northwind.example", false)
	if !strings.HasSuffix(xhr.FBC, ".IwAR_snippet123") || xhr.FBC != partial.FBC {
		t.Errorf("fbc %q with an older click's cookie; want the landing's, %q", xhr.FBC, partial.FBC)
	}
	if got := evalJS[float64](b, `window.__lead.lead_id`); int64(got) != xhr.ID {
		t.Errorf("onLead heard of lead %v; want %d", got, xhr.ID)
	}
	ids = pixelEventIDs(t, evalJS[[][]any](b, `JSON.parse(localStorage.getItem("fbq")||"[]")`))
	evs, _ = s.LeadEvents(t.Context(), f.acc.ID, xhr.ID)
	for _, e := range evs {
		if e.EventName == "Lead" && e.DatasetID == live.ID && ids[live.PixelID] != e.EventID {
			t.Errorf("XHR form: the pixel's eventID %q; the server's %q", ids[live.PixelID], e.EventID)
		}
	}

	// Another origin: the snippet runs, and nothing is taken.
	b.do(chromedp.Navigate(foreign+"/xhr"), visible(`#email`))
	b.waitJS("the snippet", `window.leadsignal`)
	b.do(typeInto(`#email`, "mallory@northwind.example"), click(`#name`), click(`#send`), visible(`#done`))
	time.Sleep(time.Second)
	if n := f.a.leadCount(f.acc); n != 2 {
		t.Errorf("%d leads after a page of another origin posted; want 2", n)
	}
	// "Send a test lead": it arrives at once, marked test, and nothing of
	// it reaches Meta.
	f.a.drain()
	before := f.a.meta.EventsReceived()
	b.do(chromedp.Navigate(section), click(`[data-testid="send-test-lead"]`), visible(`[data-testid="site-arrival-test"]`))
	if got := b.text(`[data-testid="flash"]`); !strings.Contains(got, "A real lead like it would send Lead to") {
		t.Errorf("after Send a test lead the page says %q", got)
	}
	if n := f.a.leadCount(f.acc); n != 3 {
		t.Errorf("%d leads after the test lead; want 3", n)
	}
	f.a.drain()
	if n := f.a.meta.EventsReceived(); n != before {
		t.Errorf("Meta received %d events of the test lead", n-before)
	}
	// The lead page and the leads list say it is a test lead, at 1280 and
	// 390 px.
	var test models.Lead
	all, err := s.Leads(t.Context(), f.acc.ID, store.LeadFilter{}, nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range all {
		if l.Test {
			test = l
		}
	}
	if test.ID == 0 {
		t.Fatal("no test lead stored")
	}
	for _, w := range widths {
		page := f.a.srv.URL + views.AccountURL(f.acc.ID, "/leads/"+itoa(test.ID))
		b.do(chromedp.EmulateViewport(w, 900), chromedp.Navigate(page), visible(`[data-testid="lead-test"]`))
		b.fits(fmt.Sprint("test-lead-page-", w))
		b.do(shot(fmt.Sprint("test-lead-page-", w)))
		b.do(chromedp.Navigate(f.a.srv.URL+views.AccountURL(f.acc.ID, "/leads")), visible(`[data-testid="test-badge"]`))
		b.fits(fmt.Sprint("test-lead-list-", w))
		b.do(shot(fmt.Sprint("test-lead-list-", w)))
	}
	// The section shows the snippet's leads, at 1280 and 390 px.
	for _, w := range widths {
		name := "site-snippet-" + fmt.Sprint(w)
		b.do(chromedp.EmulateViewport(w, 900), chromedp.Navigate(section), visible(`[data-testid="site-arrival"]`))
		b.fits(name)
		b.do(shot(name))
		if got := b.text(`[data-testid="site-arrivals"]`); !strings.Contains(got, "Jane") || !strings.Contains(got, "bob@northwind.example") {
			t.Errorf("at %d px the section's leads: %q", w, got)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(jsErrors) > 0 {
		t.Errorf("JavaScript errors: %v", jsErrors)
	}
}

// pixelEventIDs are the eventIDs of the stub fbq's trackSingle Lead calls,
// by pixel id.
func pixelEventIDs(t *testing.T, calls [][]any) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for _, c := range calls {
		if len(c) != 5 || c[0] != "trackSingle" || c[2] != "Lead" {
			t.Errorf("fbq call %v; want trackSingle, a pixel, Lead, {}, {eventID}", c)
			continue
		}
		opts, _ := c[4].(map[string]any)
		pixel, _ := c[1].(string)
		ids[pixel], _ = opts["eventID"].(string)
	}
	return ids
}

// snippetShapes are forms as WordPress and page builders render them, with
// what the snippet should read from each: Contact Form 7, Elementor,
// HubSpot, Gravity Forms (only autocomplete says what a field is) and a
// German form.
var snippetShapes = []struct {
	name, form                         string
	email, first, last, phone, message string
	fields                             map[string]string
}{
	{"cf7", `<input name="your-name" value="Jane Q Doe"><input type="email" name="your-email" value="cf7@northwind.example">
<input name="your-subject" value="Roof"><textarea name="your-message">Need a quote</textarea>`,
		"cf7@northwind.example", "Jane", "Q Doe", "", "Need a quote", map[string]string{"your-subject": "Roof"}},
	{"elementor", `<input name="form_fields[name]" value="Bob Builder"><input name="form_fields[email]" type="text" value="el@northwind.example">
<input name="form_fields[company_name]" value="Acme"><input name="form_fields[tel]" value="+1 415 692 4281">`,
		"el@northwind.example", "Bob", "Builder", "+1 415 692 4281", "", map[string]string{"form_fields[company_name]": "Acme"}},
	{"hubspot", `<input name="firstname" value="Ann"><input name="lastname" value="Lee"><input name="email" value="hs@northwind.example">
<input name="company" value="Lee Dental"><input name="mobilephone" value="(415) 692-4282">`,
		"hs@northwind.example", "Ann", "Lee", "(415) 692-4282", "", map[string]string{"company": "Lee Dental"}},
	{"gravity", `<input name="input_1.3" autocomplete="given-name" value="Gus"><input name="input_1.6" autocomplete="family-name" value="Grav">
<input name="input_2" type="email" value="gf@northwind.example"><input name="input_4" value="blue"><input name="input_5" type="password" value="secret">`,
		"gf@northwind.example", "Gus", "Grav", "", "", map[string]string{"input_4": "blue"}},
	{"german", `<input name="vorname" value="Lena"><input name="nachname" value="Müller"><input name="e-mail" value="de@northwind.example">
<input name="telefon" value="+49 151 2345678"><textarea name="nachricht">Angebot bitte</textarea><input name="plz" value="10115">`,
		"de@northwind.example", "Lena", "Müller", "+49 151 2345678", "Angebot bitte", map[string]string{}},
}

// TestBrowserSnippetFormShapes: the snippet reads the forms of the common
// builders as what they are: names split into first and last, a builder's
// bracketed names, autocomplete tokens, German labels; the other fields
// are custom fields, passwords never.
func TestBrowserSnippetFormShapes(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	f := newRulesFixture(t, s)
	var key string
	mux := http.NewServeMux()
	mux.HandleFunc("/shapes", func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		b.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>Forms</title></head><body>`)
		for _, sh := range snippetShapes {
			fmt.Fprintf(&b, `<form id="%s">%s<button type="submit">Send</button></form>`, sh.name, sh.form)
		}
		b.WriteString(`<script>document.addEventListener("submit",function(e){e.preventDefault();});</script>`)
		fmt.Fprintf(&b, `<script src="%s/capture.js" data-key="%s"></script></body></html>`, f.a.srv.URL, key)
		fmt.Fprint(w, b.String())
	})
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)
	key = siteKey(t, s, f.acc, site.URL).Key

	b := chrome(t)
	b.do(chromedp.Navigate(site.URL+"/shapes"), visible(`#cf7`))
	b.waitJS("the snippet", `window.leadsignal`)
	for _, sh := range snippetShapes {
		b.do(click(`#` + sh.name + ` button`))
	}
	for _, sh := range snippetShapes {
		l := snippetLead(t, f, func(l models.Lead) bool { return l.Email == sh.email })
		if l.FirstName != sh.first || l.LastName != sh.last || l.Phone != sh.phone || l.Message != sh.message {
			t.Errorf("%s: first %q, last %q, phone %q, message %q; want %q %q %q %q", sh.name, l.FirstName, l.LastName, l.Phone, l.Message,
				sh.first, sh.last, sh.phone, sh.message)
		}
		var fields map[string]string
		_ = json.Unmarshal([]byte(l.Fields), &fields)
		for k, v := range sh.fields {
			if fields[k] != v {
				t.Errorf("%s: fields[%s] = %q; want %q (fields %v)", sh.name, k, fields[k], v, fields)
			}
		}
		for k, v := range fields {
			if strings.Contains(k, "password") || v == "secret" || (sh.name == "german" && k == "plz") {
				t.Errorf("%s: fields has %s = %q", sh.name, k, v)
			}
		}
	}
}

// snippetLead waits for the lead the snippet sent to f's account that is
// match.
func snippetLead(t *testing.T, f rulesFixture, match func(models.Lead) bool) models.Lead {
	t.Helper()
	var l models.Lead
	poll.Until(t, 15*time.Second, func() error {
		ls, err := f.a.store.SnippetLeads(t.Context(), f.acc.ID, f.a.clock().Add(-time.Hour), 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range ls {
			if match(x) {
				l = x
				return nil
			}
		}
		return errors.New("no such lead from the snippet yet")
	})
	return l
}

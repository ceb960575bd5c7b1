package benchkit

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// CaptureLoad is concurrent keep-alive clients posting realistic, varied
// leads to POST /api/v1/leads, the load of the capture budgets. Its leads
// are numbered across runs, so a later run posts new people, and its
// clients keep their connections from one run to the next.
type CaptureLoad struct {
	// Endpoint is the URL of POST /api/v1/leads; Secret the ingest key.
	Endpoint string
	Secret   string
	// Secrets, when set, spreads the clients over several accounts: client
	// i posts with Secrets[i%len(Secrets)] instead of Secret.
	Secrets []string
	// Clients is how many post at once.
	Clients int
	// Message, when set, is every lead's message instead of a short varied
	// one (the costly-rules bench posts 20 KB messages).
	Message string
	// NoJunk keeps every lead clean: none is made to look like junk, so
	// each meets the account's send rules (a junk lead skips them).
	NoJunk bool
	// PostgresPID is the local Postgres whose CPU a run measures
	// (PostgresPID); 0 measures none.
	PostgresPID int
	// Origin, when set, makes the clients post as the site snippet does
	// from pages of this origin (Endpoint is then the collect API's, with
	// the site key in its query): no ingest key, and each lead's visitor
	// address and user agent in the request's X-Forwarded-For and
	// User-Agent instead of its body.
	Origin string

	once   sync.Once
	tr     *http.Transport
	client *http.Client
	seq    atomic.Int64
}

// CaptureRun is what the clients measured in a run's measured window.
type CaptureRun struct {
	Window    time.Duration
	Lat       []time.Duration
	Created   int64
	Existing  int64
	Junk      int64
	WarmupN   int64
	Errors    int64
	FirstErr  string
	BytesSent int64
	// CPU is this process's CPU time (server and clients) in the window.
	CPU time.Duration
	// PgCPU is the local Postgres cluster's CPU time in the window; 0 when
	// unknown.
	PgCPU time.Duration
}

// Close closes the clients' idle connections.
func (l *CaptureLoad) Close() {
	if l.tr != nil {
		l.tr.CloseIdleConnections()
	}
}

func (l *CaptureLoad) http() *http.Client {
	l.once.Do(func() { l.tr, l.client = keepAliveClient(l.Clients) })
	return l.client
}

// Run has the clients post for warmup, then for the measured window dur,
// and returns what they measured. A request counts when it completes
// inside the measured window. With cpuprofile, a CPU profile of the
// measured window (server and clients) is written to that file.
func (l *CaptureLoad) Run(warmup, dur time.Duration, cpuprofile string) (*CaptureRun, error) {
	client := l.http()
	pgPID := l.PostgresPID

	start := time.Now()
	measureFrom := start.Add(warmup)
	end := measureFrom.Add(dur)

	var (
		mu       sync.Mutex
		res      = &CaptureRun{Window: dur}
		profOnce sync.Once
		profErr  error
		profFile *os.File
	)
	var cpuStart, pgStart time.Duration
	startProfile := func() {
		profOnce.Do(func() {
			cpuStart = CPUTime()
			pgStart, _ = PostgresCPU(pgPID)
			if cpuprofile == "" {
				return
			}
			f, err := os.Create(cpuprofile)
			if err != nil {
				profErr = err
				return
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				f.Close()
				profErr = err
				return
			}
			profFile = f
		})
	}
	if warmup == 0 {
		startProfile()
	} else {
		t := time.AfterFunc(warmup, startProfile)
		defer t.Stop()
	}

	var wg sync.WaitGroup
	for w := range l.Clients {
		wg.Go(func() {
			gen := newGenerator(uint64(w), &l.seq)
			gen.message, gen.noJunk = l.Message, l.NoJunk
			header := http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + l.Secret}}
			if len(l.Secrets) > 0 {
				header.Set("Authorization", "Bearer "+l.Secrets[w%len(l.Secrets)])
			}
			if l.Origin != "" {
				header = http.Header{"Content-Type": {"text/plain;charset=UTF-8"}, "Origin": {l.Origin}}
				gen.browser = header
			}
			var (
				lat                                 []time.Duration
				created, existing, junk, warm, errs int64
				sent                                int64
				first                               string
				buf                                 bytes.Buffer
				respBuf                             = make([]byte, 4096)
			)
			for {
				t0 := time.Now()
				if !t0.Before(end) {
					break
				}
				buf.Reset()
				gen.lead(&buf)
				sent += int64(buf.Len())
				status, body, err := post(client, l.Endpoint, header, buf.Bytes(), respBuf)
				t1 := time.Now()
				if err != nil || status/100 != 2 {
					errs++
					if first == "" {
						if err != nil {
							first = err.Error()
						} else {
							first = fmt.Sprintf("HTTP %d: %s (request %s)", status, body, truncate(buf.String(), 300))
						}
					}
					continue
				}
				if t1.Before(measureFrom) || t1.After(end) {
					warm++
					continue
				}
				lat = append(lat, t1.Sub(t0))
				if status == http.StatusCreated {
					created++
				} else {
					existing++
				}
				if bytes.Contains(body, []byte(`"junk":true`)) {
					junk++
				}
			}
			mu.Lock()
			defer mu.Unlock()
			res.Lat = append(res.Lat, lat...)
			res.Created += created
			res.Existing += existing
			res.Junk += junk
			res.WarmupN += warm
			res.Errors += errs
			res.BytesSent += sent
			if res.FirstErr == "" {
				res.FirstErr = first
			}
		})
	}
	wg.Wait()
	profOnce.Do(func() {}) // the warmup timer cannot fire after this
	res.CPU = CPUTime() - cpuStart
	if pg, ok := PostgresCPU(pgPID); ok {
		res.PgCPU = pg - pgStart
	}
	if profFile != nil {
		pprof.StopCPUProfile()
		profFile.Close()
	}
	if profErr != nil {
		return nil, fmt.Errorf("cpu profile: %w", profErr)
	}
	return res, nil
}

func post(client *http.Client, endpoint string, header http.Header, body, respBuf []byte) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header = header
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	n, err := io.ReadFull(resp.Body, respBuf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return resp.StatusCode, nil, err
	}
	// Drain what did not fit so the connection is reused.
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return resp.StatusCode, nil, err
	}
	return resp.StatusCode, respBuf[:n], nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// lead is the JSON body posted; omitempty keeps absent fields absent, as a
// website form integration would send them.
type lead struct {
	ExternalID      string            `json:"external_id,omitempty"`
	Email           string            `json:"email,omitempty"`
	Phone           string            `json:"phone,omitempty"`
	FirstName       string            `json:"first_name,omitempty"`
	LastName        string            `json:"last_name,omitempty"`
	City            string            `json:"city,omitempty"`
	State           string            `json:"state,omitempty"`
	Zip             string            `json:"zip,omitempty"`
	Country         string            `json:"country,omitempty"`
	Message         string            `json:"message,omitempty"`
	FBCLID          string            `json:"fbclid,omitempty"`
	FBP             string            `json:"fbp,omitempty"`
	ClientIP        string            `json:"client_ip_address,omitempty"`
	ClientUserAgent string            `json:"client_user_agent,omitempty"`
	EventSourceURL  string            `json:"event_source_url,omitempty"`
	FillSeconds     *float64          `json:"fill_seconds,omitempty"`
	Honeypot        string            `json:"honeypot,omitempty"`
	Source          string            `json:"source,omitempty"`
	Fields          map[string]string `json:"fields,omitempty"`
}

var (
	firstNames = []string{"James", "Mary", "Robert", "Patricia", "John", "Jennifer", "Michael", "Linda", "David", "Elizabeth",
		"Oliver", "Amelia", "George", "Isla", "Harry", "Lukas", "Lena", "Maximilian", "Sophie", "José", "Zoë", "Mia", "Noah", "Aarav", "Chloé"}
	lastNames = []string{"Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Taylor", "Wilson",
		"Evans", "Thomas", "Müller", "Schmidt", "Schneider", "Fischer", "Weber", "O'Brien", "Nguyen", "Patel", "García-López"}
	domains = []string{"gmail.com", "yahoo.com", "outlook.com", "hotmail.com", "icloud.com", "aol.com", "gmx.de", "web.de",
		"btinternet.com", "acme-corp.com", "example-dental.com", "proton.me"}
	usPlaces = [][3]string{{"New York", "NY", "100"}, {"Austin", "TX", "787"}, {"Denver", "CO", "802"}, {"Seattle", "WA", "981"},
		{"Miami", "FL", "331"}, {"Chicago", "IL", "606"}, {"Phoenix", "AZ", "850"}, {"Boston", "MA", "021"}}
	usAreas   = []string{"212", "646", "512", "303", "206", "305", "312", "602", "617", "415", "702", "404"}
	gbPlaces  = []string{"London", "Manchester", "Leeds", "Bristol", "Glasgow"}
	dePlaces  = []string{"Berlin", "München", "Hamburg", "Köln", "Frankfurt am Main"}
	dePrefix  = []string{"151", "152", "157", "160", "170", "171", "176", "179"}
	userAgent = []string{
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/468.0.0.41.109;FBBV/612345678;FBDV/iPhone15,2;FBMD/iPhone;FBSN/iOS;FBSV/17.5;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5]",
		"Mozilla/5.0 (Linux; Android 14; SM-S918B Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/125.0.6422.165 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/467.0.0.45.109;]",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
		"Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0",
		"Mozilla/5.0 (Linux; Android 13; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Mobile Safari/537.36 Instagram 334.0.0.42.95 Android",
	}
	pages = []string{"https://www.example-dental.com/free-consultation", "https://acme-roofing.example.com/quote?utm_source=facebook&utm_medium=paid&utm_campaign=spring_promo",
		"https://www.example-law.com/contact/", "https://shop.example.de/kontakt?utm_source=fb&utm_content=video_a", "https://example.co.uk/book-a-call"}
	messages = []string{
		"Hi, I'd like a quote for a full roof replacement, about 2,000 sq ft. Mornings work best.",
		"Can someone call me back about the free consultation? Thanks!",
		"Interested in Invisalign, do you offer payment plans?",
		"Guten Tag, ich hätte gerne ein Angebot für die Renovierung unseres Badezimmers.",
		"Looking for help with a car accident claim from last month.",
		"", "", "",
	}
	junkMessages = []string{
		"We are a leading SEO agency and can get your website on the first page of Google. Reply for a free audit!",
		"Hello, I am applying for the receptionist position. Please find my resume and CV attached.",
		"asdf",
	}
)

// generator makes varied leads. Each worker has its own, seeded by its
// number, and numbers its leads from a shared counter so emails, phones
// and external ids stay distinct across workers.
type generator struct {
	r   *mrand.Rand
	seq *atomic.Int64
	run string
	// message, when set, is every lead's message; noJunk makes no lead
	// look like junk (CaptureLoad.Message, NoJunk).
	message string
	noJunk  bool
	// browser, when set, is the header of a browser's post (CaptureLoad.
	// Origin): each lead's visitor address and user agent go there.
	browser http.Header
	// recent holds recent emails, for duplicates.
	recent [64]string
}

var runID = strings.ToLower(rand.Text()[:6])

func newGenerator(worker uint64, seq *atomic.Int64) *generator {
	return &generator{r: mrand.New(mrand.NewPCG(worker+1, uint64(time.Now().UnixNano()))), seq: seq, run: runID}
}

func (g *generator) pick(s []string) string { return s[g.r.IntN(len(s))] }

func (g *generator) digits(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + g.r.IntN(10))
	}
	return string(b)
}

// emailLocal makes a name the local part of an address.
var emailLocal = strings.NewReplacer("'", "", " ", "", "ü", "ue", "é", "e", "ë", "e")

// lead writes one JSON lead to buf.
func (g *generator) lead(buf *bytes.Buffer) {
	n := g.seq.Add(1)
	first, last := g.pick(firstNames), g.pick(lastNames)
	l := lead{
		FirstName:       first,
		LastName:        last,
		ClientUserAgent: g.pick(userAgent),
		EventSourceURL:  g.pick(pages),
		Message:         g.pick(messages),
	}
	local := strings.ToLower(emailLocal.Replace(first + "." + last))
	l.Email = fmt.Sprintf("%s%d@%s", local, n, g.pick(domains))
	if g.r.IntN(2) == 0 {
		l.Email = strings.ToUpper(l.Email[:1]) + l.Email[1:] + " "
	}

	switch c := g.r.IntN(10); {
	case c < 6: // US, formatted every which way, often without +1
		area, a, b := g.pick(usAreas), 200+g.r.IntN(800), g.r.IntN(10000)
		for a == 555 {
			a = 200 + g.r.IntN(800)
		}
		switch g.r.IntN(4) {
		case 0:
			l.Phone = fmt.Sprintf("(%s) %03d-%04d", area, a, b)
		case 1:
			l.Phone = fmt.Sprintf("%s-%03d-%04d", area, a, b)
		case 2:
			l.Phone = fmt.Sprintf("+1 %s %03d %04d", area, a, b)
		default:
			l.Phone = fmt.Sprintf("1%s%03d%04d", area, a, b)
		}
		p := usPlaces[g.r.IntN(len(usPlaces))]
		l.City, l.State, l.Zip, l.Country = p[0], p[1], p[2]+g.digits(2), "US"
	case c < 8: // GB mobile
		l.Phone = "+44 7" + fmt.Sprint(4+g.r.IntN(6)) + g.digits(2) + " " + g.digits(6)
		l.City, l.Country = g.pick(gbPlaces), "GB"
	default: // DE mobile
		l.Phone = "+49 " + g.pick(dePrefix) + " " + g.digits(7+g.r.IntN(2))
		l.City, l.Country = g.pick(dePlaces), "DE"
	}
	if g.r.IntN(10) < 7 {
		l.ExternalID = fmt.Sprintf("bench-%s-%d", g.run, n)
	}
	if g.r.IntN(10) < 6 {
		l.FBCLID = "IwAR" + strings.ReplaceAll(rand.Text(), "=", "") + g.digits(8)
		l.FBP = fmt.Sprintf("fb.1.%d.%s", time.Now().UnixMilli()-int64(g.r.IntN(86400000)), g.digits(10))
	}
	if g.r.IntN(2) == 0 {
		l.ClientIP = fmt.Sprintf("%d.%d.%d.%d", 23+g.r.IntN(180), g.r.IntN(256), g.r.IntN(256), 1+g.r.IntN(254))
	} else {
		l.ClientIP = fmt.Sprintf("2a02:%x:%x::%x", g.r.IntN(0xffff), g.r.IntN(0xffff), 1+g.r.IntN(0xfffe))
	}
	fs := 8 + g.r.Float64()*180
	l.FillSeconds = &fs
	if g.r.IntN(4) == 0 {
		l.Fields = map[string]string{"service": g.pick([]string{"roofing", "gutters", "siding"}), "budget": fmt.Sprint(1000 * (1 + g.r.IntN(20)))}
	}

	if g.message != "" {
		l.Message = g.message
	}
	// About one lead in ten looks like junk, in one of several ways.
	if !g.noJunk && g.r.IntN(10) == 0 {
		switch g.r.IntN(6) {
		case 0:
			fast := g.r.Float64() * 1.5
			l.FillSeconds = &fast
		case 1:
			l.Honeypot = "http://spam.example.com"
		case 2:
			l.Phone = g.pick([]string{"1111111111", "+1 (212) 555-0123", "123456789", "0000"})
		case 3:
			l.Message = g.pick(junkMessages)
		case 4:
			l.Email = fmt.Sprintf("test%d@mailinator.com", n)
		case 5:
			// The same person again: a duplicate of a recent lead.
			if prev := g.recent[g.r.IntN(len(g.recent))]; prev != "" {
				l.Email = prev
				l.ExternalID = ""
			}
		}
	}

	g.recent[n%int64(len(g.recent))] = l.Email
	if g.browser != nil {
		g.browser.Set("X-Forwarded-For", l.ClientIP)
		g.browser.Set("User-Agent", l.ClientUserAgent)
		l.ClientIP, l.ClientUserAgent = "", ""
	}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(&l)
}

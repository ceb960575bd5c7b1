package benchkit

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"
)

// Posts is concurrent keep-alive clients posting a fixed number of JSON
// bodies to one endpoint with an ingest key, as a CRM syncing its changes
// would: the load of the stage API bench. Body writes the i-th body.
type Posts struct {
	// Endpoint is the URL posted to; Secret the ingest key.
	Endpoint string
	Secret   string
	// Clients is how many post at once.
	Clients int
	// Body writes request i's JSON to buf; it is called from several
	// clients at once.
	Body func(i int, buf *bytes.Buffer)
	// PostgresPID is the local Postgres whose CPU a run measures
	// (PostgresPID); 0 measures none.
	PostgresPID int

	once   sync.Once
	tr     *http.Transport
	client *http.Client
}

// PostsRun is what the clients measured in a run.
type PostsRun struct {
	// Wall is the run's time, from the first request sent to the last
	// answer.
	Wall time.Duration
	// Lat are the answered requests' latencies; Status counts them by
	// HTTP status.
	Lat    []time.Duration
	Status map[int]int64
	// Errors counts requests without a 2xx answer; FirstErr says why the
	// first failed.
	Errors   int64
	FirstErr string
	// CPU is this process's CPU time (server and clients) in the run;
	// PgCPU the local Postgres cluster's, 0 when unknown.
	CPU   time.Duration
	PgCPU time.Duration
}

// Close closes the clients' idle connections.
func (p *Posts) Close() {
	if p.tr != nil {
		p.tr.CloseIdleConnections()
	}
}

// Run posts bodies first to first+n-1, the clients taking the next one
// as they are done with theirs, and returns what they measured. With
// cpuprofile, a CPU profile of the run (server and clients) is written to
// that file.
func (p *Posts) Run(first, n int, cpuprofile string) (*PostsRun, error) {
	p.once.Do(func() { p.tr, p.client = keepAliveClient(p.Clients) })
	stop, err := StartCPUProfile(cpuprofile)
	if err != nil {
		return nil, err
	}
	var (
		mu   sync.Mutex
		next atomic.Int64
		res  = &PostsRun{Status: map[int]int64{}}
		wg   sync.WaitGroup
	)
	auth := "Bearer " + p.Secret
	cpu0, t0 := CPUTime(), time.Now()
	pg0, _ := PostgresCPU(p.PostgresPID)
	for range p.Clients {
		wg.Go(func() {
			var (
				buf     bytes.Buffer
				respBuf = make([]byte, 4096)
				lat     []time.Duration
				status  = map[int]int64{}
				errs    int64
				firstE  string
			)
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					break
				}
				buf.Reset()
				p.Body(first+i, &buf)
				s := time.Now()
				code, body, err := post(p.client, p.Endpoint, http.Header{"Content-Type": {"application/json"}, "Authorization": {auth}}, buf.Bytes(), respBuf)
				d := time.Since(s)
				if err != nil || code/100 != 2 {
					errs++
					if firstE == "" {
						if err != nil {
							firstE = err.Error()
						} else {
							firstE = fmt.Sprintf("HTTP %d: %s (request %s)", code, body, truncate(buf.String(), 300))
						}
					}
					if err != nil {
						continue
					}
				}
				lat = append(lat, d)
				status[code]++
			}
			mu.Lock()
			defer mu.Unlock()
			res.Lat = append(res.Lat, lat...)
			for c, k := range status {
				res.Status[c] += k
			}
			res.Errors += errs
			if res.FirstErr == "" {
				res.FirstErr = firstE
			}
		})
	}
	wg.Wait()
	res.Wall, res.CPU = time.Since(t0), CPUTime()-cpu0
	if pg, ok := PostgresCPU(p.PostgresPID); ok {
		res.PgCPU = pg - pg0
	}
	return res, stop()
}

// keepAliveClient is an HTTP client that keeps a connection per client
// for a run's clients, without compression, as the load drivers use.
func keepAliveClient(clients int) (*http.Transport, *http.Client) {
	tr := &http.Transport{
		MaxIdleConns:        clients * 2,
		MaxIdleConnsPerHost: clients * 2,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	return tr, &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// StartCPUProfile starts a CPU profile of this process into file and
// returns what stops it; with no file it does nothing.
func StartCPUProfile(file string) (stop func() error, err error) {
	if file == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(file)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

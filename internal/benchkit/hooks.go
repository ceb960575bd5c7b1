package benchkit

import (
	"fmt"
	"io"
	"net/http"
)

// Sign makes p's clients sign each request as a CRM signs its webhooks,
// instead of sending an ingest key: header carries sign(body), and no
// Authorization header is sent. Call it before the first Run.
func (p *Posts) Sign(header string, sign func(body []byte) string) {
	p.once.Do(func() {
		tr, client := keepAliveClient(p.Clients)
		client.Transport = signer{base: tr, header: header, sign: sign}
		p.tr, p.client = tr, client
	})
}

// signer is a RoundTripper that signs a request's body into a header.
type signer struct {
	base   http.RoundTripper
	header string
	sign   func(body []byte) string
}

func (s signer) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.GetBody == nil {
		return nil, fmt.Errorf("sign %s: the request's body cannot be read twice", r.URL)
	}
	rc, err := r.GetBody()
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return nil, err
	}
	// A RoundTripper may not change the request it is given: sign a copy.
	signed := r.Clone(r.Context())
	signed.Header.Del("Authorization")
	signed.Header.Set(s.header, s.sign(body))
	return s.base.RoundTrip(signed)
}

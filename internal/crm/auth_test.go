package crm

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The fact sheet's vectors (HubSpot's published v1 and v2 values, a v3
// and a generic one computed independently).
const (
	hubspotSecret = "yyyyyyyy-yyyy-yyyy-yyyy-yyyyyyyyyyyy"
	hubspotV1Body = `[{"eventId":1,"subscriptionId":12345,"portalId":62515,"occurredAt":1564113600000,"subscriptionType":"contact.creation","attemptNumber":0,"objectId":123,"changeSource":"CRM","changeFlag":"NEW","appId":54321}]`
	hubspotV1Sig  = "232db2615f3d666fe21a8ec971ac7b5402d33b9a925784df3ca654d05f4817de"
	hubspotV2URL  = "https://www.example.com/webhook_uri"
	hubspotV2Get  = "eee2dddcc73c94d699f5e395f4b9d454a069a6855fbfa152e91e88823087200e"
	hubspotV2Body = `{"example_field":"example_value"}`
	hubspotV2Post = "9569219f8ba981ffa6f6f16aa0f48637d35d728c7e4d93d0d52efaa512af7900"
	hubspotV3URL  = "https://example.com/hooks/hubspot"
	hubspotV3Body = `[{"eventId":100,"subscriptionId":1234,"portalId":62515,"appId":54321,"occurredAt":1708986598741,"subscriptionType":"deal.propertyChange","attemptNumber":0,"objectId":987654321,"propertyName":"dealstage","propertyValue":"closedwon","changeSource":"CRM_UI","sourceId":"userId:45678"}]`
	hubspotV3TS   = "1708986599647"
	hubspotV3Sig  = "sVTUJW6JASuHHhzInXMNmpd7ed5dRvHf7Y8tn/u1z/0="

	genericSecret = "whsec_test"
	genericBody   = `{"id":"evt_1"}`
	genericSig    = "c89214b5b5da833daed6f0b8c5bb6bd58cea9022bd80ccc78230f3942d632925"
)

var (
	hubspotV3Now = time.UnixMilli(1708986599647).Add(2 * time.Second)
	genericNow   = time.Unix(1700000000, 0).Add(time.Second)
)

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func basic(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

func TestVerify(t *testing.T) {
	v3 := func(kv ...string) http.Header {
		return header(append([]string{hubspotV3Header, hubspotV3Sig, hubspotTimestampHeader, hubspotV3TS}, kv...)...)
	}
	post := func(url, body string, h http.Header) Request {
		return Request{Method: http.MethodPost, URL: url, Header: h, Body: []byte(body)}
	}
	tests := []struct {
		name   string
		kind   Kind
		secret string
		req    Request
		now    time.Time
		want   error // nil: accepted
	}{
		// HubSpot v1 and v2: HubSpot's published vectors.
		{"hubspot v1", HubSpot, hubspotSecret, post(hubspotV2URL, hubspotV1Body, header(hubspotHeader, hubspotV1Sig, hubspotVersionHeader, "v1")), genericNow, nil},
		{"hubspot v1 without a version header", HubSpot, hubspotSecret, post(hubspotV2URL, hubspotV1Body, header(hubspotHeader, hubspotV1Sig)), genericNow, nil},
		{"hubspot v1 upper-case hex", HubSpot, hubspotSecret, post(hubspotV2URL, hubspotV1Body, header(hubspotHeader, strings.ToUpper(hubspotV1Sig))), genericNow, nil},
		{"hubspot v1 tampered body", HubSpot, hubspotSecret, post(hubspotV2URL, strings.Replace(hubspotV1Body, "123", "124", 1), header(hubspotHeader, hubspotV1Sig)), genericNow, ErrBadSignature},
		{"hubspot v1 wrong secret", HubSpot, "other", post(hubspotV2URL, hubspotV1Body, header(hubspotHeader, hubspotV1Sig)), genericNow, ErrBadSignature},
		{"hubspot v1 not hex", HubSpot, hubspotSecret, post(hubspotV2URL, hubspotV1Body, header(hubspotHeader, "zz")), genericNow, ErrBadSignature},
		{"hubspot v1 signature sent as v2", HubSpot, hubspotSecret, post(hubspotV2URL, hubspotV1Body, header(hubspotHeader, hubspotV1Sig, hubspotVersionHeader, "v2")), genericNow, ErrBadSignature},
		{"hubspot unknown version", HubSpot, hubspotSecret, post(hubspotV2URL, hubspotV1Body, header(hubspotHeader, hubspotV1Sig, hubspotVersionHeader, "v9")), genericNow, ErrBadSignature},
		{"hubspot v2 GET", HubSpot, hubspotSecret, Request{Method: http.MethodGet, URL: hubspotV2URL, Header: header(hubspotHeader, hubspotV2Get, hubspotVersionHeader, "v2")}, genericNow, nil},
		{"hubspot v2 POST", HubSpot, hubspotSecret, post(hubspotV2URL, hubspotV2Body, header(hubspotHeader, hubspotV2Post, hubspotVersionHeader, "v2")), genericNow, nil},
		{"hubspot v2 other URL", HubSpot, hubspotSecret, post(hubspotV2URL+"?x=1", hubspotV2Body, header(hubspotHeader, hubspotV2Post, hubspotVersionHeader, "v2")), genericNow, ErrBadSignature},
		{"hubspot v2 signature sent as v1", HubSpot, hubspotSecret, post(hubspotV2URL, hubspotV2Body, header(hubspotHeader, hubspotV2Post)), genericNow, ErrBadSignature},
		// HubSpot v3.
		{"hubspot v3", HubSpot, hubspotSecret, post(hubspotV3URL, hubspotV3Body, v3()), hubspotV3Now, nil},
		{"hubspot v3 4m59s late", HubSpot, hubspotSecret, post(hubspotV3URL, hubspotV3Body, v3()), time.UnixMilli(1708986599647).Add(Tolerance - time.Second), nil},
		{"hubspot v3 stale", HubSpot, hubspotSecret, post(hubspotV3URL, hubspotV3Body, v3()), time.UnixMilli(1708986599647).Add(Tolerance + time.Millisecond), ErrStale},
		{"hubspot v3 from the future", HubSpot, hubspotSecret, post(hubspotV3URL, hubspotV3Body, v3()), time.UnixMilli(1708986599647).Add(-Tolerance - time.Second), ErrStale},
		{"hubspot v3 tampered body", HubSpot, hubspotSecret, post(hubspotV3URL, strings.Replace(hubspotV3Body, "closedwon", "closedlost", 1), v3()), hubspotV3Now, ErrBadSignature},
		{"hubspot v3 wrong secret", HubSpot, "other", post(hubspotV3URL, hubspotV3Body, v3()), hubspotV3Now, ErrBadSignature},
		{"hubspot v3 other URL", HubSpot, hubspotSecret, post("http://example.com/hooks/hubspot", hubspotV3Body, v3()), hubspotV3Now, ErrBadSignature},
		{"hubspot v3 other method", HubSpot, hubspotSecret, Request{Method: http.MethodPut, URL: hubspotV3URL, Header: v3(), Body: []byte(hubspotV3Body)}, hubspotV3Now, ErrBadSignature},
		{"hubspot v3 timestamp not signed as sent", HubSpot, hubspotSecret, post(hubspotV3URL, hubspotV3Body, header(hubspotV3Header, hubspotV3Sig, hubspotTimestampHeader, "01708986599647")), hubspotV3Now, ErrBadSignature},
		{"hubspot v3 without a timestamp", HubSpot, hubspotSecret, post(hubspotV3URL, hubspotV3Body, header(hubspotV3Header, hubspotV3Sig)), hubspotV3Now, ErrBadSignature},
		{"hubspot v3 timestamp in seconds", HubSpot, hubspotSecret, post(hubspotV3URL, hubspotV3Body, header(hubspotV3Header, hubspotV3Sig, hubspotTimestampHeader, "1708986599")), hubspotV3Now, ErrStale},
		{"hubspot v3 not base64", HubSpot, hubspotSecret, post(hubspotV3URL, hubspotV3Body, header(hubspotV3Header, "!!", hubspotTimestampHeader, hubspotV3TS)), hubspotV3Now, ErrBadSignature},
		{"hubspot bad v3 does not fall back to a good v1", HubSpot, hubspotSecret,
			post(hubspotV2URL, hubspotV1Body, header(hubspotV3Header, hubspotV3Sig, hubspotTimestampHeader, hubspotV3TS, hubspotHeader, hubspotV1Sig, hubspotVersionHeader, "v1")), hubspotV3Now, ErrBadSignature},
		{"hubspot stale v3 does not fall back to a good v1", HubSpot, hubspotSecret,
			post(hubspotV2URL, hubspotV1Body, header(hubspotV3Header, hubspotV3Sig, hubspotTimestampHeader, hubspotV3TS, hubspotHeader, hubspotV1Sig)), hubspotV3Now.Add(time.Hour), ErrStale},
		{"hubspot unsigned", HubSpot, hubspotSecret, post(hubspotV3URL, hubspotV3Body, header()), hubspotV3Now, ErrNotSigned},
		{"hubspot timestamp alone", HubSpot, hubspotSecret, post(hubspotV3URL, hubspotV3Body, header(hubspotTimestampHeader, hubspotV3TS)), hubspotV3Now, ErrNotSigned},
		{"hubspot with an empty secret", HubSpot, "", post(hubspotV2URL, hubspotV1Body, header(hubspotHeader, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")), genericNow, ErrBadCredentials},
		// Pipedrive.
		{"pipedrive", Pipedrive, "s3cret:with:colons", post("", "{}", header("Authorization", basic("leadsignal", "s3cret:with:colons"))), genericNow, nil},
		{"pipedrive lower-case scheme", Pipedrive, "pw", post("", "{}", header("Authorization", "basic "+base64.StdEncoding.EncodeToString([]byte("leadsignal:pw")))), genericNow, nil},
		{"pipedrive wrong user", Pipedrive, "pw", post("", "{}", header("Authorization", basic("admin", "pw"))), genericNow, ErrBadCredentials},
		{"pipedrive wrong password", Pipedrive, "pw", post("", "{}", header("Authorization", basic("leadsignal", "pw2"))), genericNow, ErrBadCredentials},
		{"pipedrive password prefix", Pipedrive, "pw", post("", "{}", header("Authorization", basic("leadsignal", "p"))), genericNow, ErrBadCredentials},
		{"pipedrive malformed base64", Pipedrive, "pw", post("", "{}", header("Authorization", "Basic !!not-base64")), genericNow, ErrBadCredentials},
		{"pipedrive no colon", Pipedrive, "pw", post("", "{}", header("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("leadsignalpw")))), genericNow, ErrBadCredentials},
		{"pipedrive bearer", Pipedrive, "pw", post("", "{}", header("Authorization", "Bearer pw")), genericNow, ErrNotSigned},
		{"pipedrive no auth", Pipedrive, "pw", post("", "{}", header()), genericNow, ErrNotSigned},
		// Generic.
		{"generic", Generic, genericSecret, post("", genericBody, header(GenericHeader, "t=1700000000,v1="+genericSig)), genericNow, nil},
		{"generic second v1 matches, unknown scheme skipped", Generic, genericSecret, post("", genericBody, header(GenericHeader, "t=1700000000, v0=abc, v1=00ff, v1="+genericSig)), genericNow, nil},
		{"generic stale", Generic, genericSecret, post("", genericBody, header(GenericHeader, "t=1700000000,v1="+genericSig)), time.Unix(1700000000, 0).Add(Tolerance + time.Second), ErrStale},
		{"generic from the future", Generic, genericSecret, post("", genericBody, header(GenericHeader, "t=1700000000,v1="+genericSig)), time.Unix(1700000000, 0).Add(-Tolerance - time.Second), ErrStale},
		{"generic tampered body", Generic, genericSecret, post("", `{"id":"evt_2"}`, header(GenericHeader, "t=1700000000,v1="+genericSig)), genericNow, ErrBadSignature},
		{"generic wrong secret", Generic, "whsec_other", post("", genericBody, header(GenericHeader, "t=1700000000,v1="+genericSig)), genericNow, ErrBadSignature},
		{"generic other timestamp", Generic, genericSecret, post("", genericBody, header(GenericHeader, "t=1700000001,v1="+genericSig)), genericNow, ErrBadSignature},
		{"generic without a timestamp", Generic, genericSecret, post("", genericBody, header(GenericHeader, "v1="+genericSig)), genericNow, ErrBadSignature},
		{"generic without v1", Generic, genericSecret, post("", genericBody, header(GenericHeader, "t=1700000000,v0="+genericSig)), genericNow, ErrBadSignature},
		{"generic bad signature does not fall back to bearer", Generic, genericSecret,
			post("", genericBody, header(GenericHeader, "t=1700000000,v1=00", "Authorization", "Bearer "+genericSecret)), genericNow, ErrBadSignature},
		{"generic bearer", Generic, genericSecret, post("", genericBody, header("Authorization", "Bearer "+genericSecret)), genericNow, nil},
		{"generic wrong bearer", Generic, genericSecret, post("", genericBody, header("Authorization", "Bearer whsec_tes")), genericNow, ErrBadCredentials},
		{"generic basic auth", Generic, genericSecret, post("", genericBody, header("Authorization", basic("x", genericSecret))), genericNow, ErrNotSigned},
		{"generic unsigned", Generic, genericSecret, post("", genericBody, header()), genericNow, ErrNotSigned},
		{"unknown kind", Kind("salesforce"), genericSecret, post("", genericBody, header("Authorization", "Bearer "+genericSecret)), genericNow, ErrNotSigned},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Verify(tt.kind, tt.secret, tt.req, tt.now)
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("Verify = %v; want %v", err, tt.want)
			}
			if err != nil && tt.secret != "" && strings.Contains(err.Error(), tt.secret) {
				t.Errorf("Verify's error %q holds the secret", err)
			}
		})
	}
}

func TestSignHubSpotV3(t *testing.T) {
	if got := SignHubSpotV3(hubspotSecret, http.MethodPost, hubspotV3URL, []byte(hubspotV3Body), hubspotV3TS); got != hubspotV3Sig {
		t.Errorf("SignHubSpotV3 = %q; want %q", got, hubspotV3Sig)
	}
	// HubSpot decodes a few escapes before signing, and only those.
	ts := strconv.FormatInt(hubspotV3Now.UnixMilli(), 10)
	tests := []struct {
		sent, signed string
	}{
		{"https://a.example/h?x=a%3Ab%2Fc%40d%21%24%27%28%29%2A%2C%3B%3F", "https://a.example/h?x=a:b/c@d!$'()*,;?"},
		{"https://a.example/h?x=%3a%2f", "https://a.example/h?x=:/"},
		{"https://a.example/h?x=%20%26%3D%25", "https://a.example/h?x=%20%26%3D%25"},
		{"https://a.example/h?x=%3", "https://a.example/h?x=%3"},
	}
	for _, tt := range tests {
		want := SignHubSpotV3(hubspotSecret, http.MethodPost, tt.signed, nil, ts)
		if got := base64.StdEncoding.EncodeToString(hubspotV3(hubspotSecret, http.MethodPost, tt.sent, nil, ts)); got != want {
			t.Errorf("v3 of %q is not v3 of %q", tt.sent, tt.signed)
		}
		if got := hubspotURI(tt.sent); got != tt.signed {
			t.Errorf("hubspotURI(%q) = %q; want %q", tt.sent, got, tt.signed)
		}
		r := Request{Method: http.MethodPost, URL: tt.sent, Header: header(hubspotV3Header, want, hubspotTimestampHeader, ts)}
		if err := Verify(HubSpot, hubspotSecret, r, hubspotV3Now); err != nil {
			t.Errorf("Verify(%q) = %v", tt.sent, err)
		}
	}
}

func TestSignGeneric(t *testing.T) {
	want := "t=1700000000,v1=" + genericSig
	if got := SignGeneric(genericSecret, time.Unix(1700000000, 0), []byte(genericBody)); got != want {
		t.Errorf("SignGeneric = %q; want %q", got, want)
	}
}

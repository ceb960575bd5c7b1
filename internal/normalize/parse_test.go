package normalize

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// parseCases are stored keys in and out of ParseKeys' fast path.
var parseCases = []string{
	`{}`,
	`{"em":{"normalized":"jane@example.com","hash":"8c87b489ce35cf2e2f39f80e282cb2e804932a56a213983eafa2ca51b5b5b5b5"},"ph":{"normalized":"14155550100"},"fbc_rebuilt":true,"phone_country":"US"}`,
	`{"fn":{"normalized":"josé","hash":"x"},"client_user_agent":"Mozilla/5.0 (X11)","fbc":"fb.1.1.a","fbp":"fb.1.2.3","fbc_rebuilt":false}`,
	`{"em":{"hash":"a","normalized":"b"},"em":{"hash":"c"}}`,
	`{"client_user_agent":"a \u0026 b \"c\""}`,
	`{"ph":{"normalized":"555"},"problems":[{"field":"ph","value":"555","reason":"too short"}]}`,
	`{ "em" : {"hash":"a"} }`,
	`{"EM":{"hash":"a"},"Country":{"Hash":"b"}}`,
	`{"em":null,"fbp":null}`,
	`{"fn":{"normalized":"\xff"}}`,
	`{"em":{"hash":"a"}`,
	`{"em":{"hash":"a"}}x`,
	`{"fbc_rebuilt":tru}`,
	`[]`,
	``,
}

func FuzzParseKeys(f *testing.F) {
	for _, c := range parseCases {
		f.Add([]byte(c))
	}
	keys := Normalize(fullInput)
	stored, err := json.Marshal(keys)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(stored)
	f.Fuzz(func(t *testing.T, data []byte) {
		got, gotErr := ParseKeys(data)
		var want Keys
		wantErr := json.Unmarshal(data, &want)
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("ParseKeys(%q) error %v; json.Unmarshal's %v", data, gotErr, wantErr)
		}
		if gotErr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("ParseKeys(%q) =\n%+v\njson.Unmarshal gives\n%+v", data, got, want)
		}
	})
}

func TestParseKeysTakesWhatNormalizeStores(t *testing.T) {
	for _, in := range []Input{fullInput, {Email: "joe@", Phone: "555", CapturedAt: time.Unix(1_700_000_000, 0)}} {
		keys := Normalize(in)
		stored, err := json.Marshal(keys)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseKeys(stored)
		if err != nil || !reflect.DeepEqual(got, keys) {
			t.Errorf("ParseKeys(%s) = %+v, %v; want %+v", stored, got, err, keys)
		}
	}
	var k Keys
	if !k.parse([]byte(`{"em":{"normalized":"a","hash":"b"},"client_ip_address":"1.2.3.4","fbc_rebuilt":true}`)) {
		t.Error("the compact form json.Marshal writes did not take the fast path")
	}
}

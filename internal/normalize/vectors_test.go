package normalize

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// The golden vectors come from the tests of Meta's Business SDKs (each names
// its source repository, commit and file). testdata/capi-vectors is a copy of
// the shared set, so the suite never depends on a checkout beside the repo;
// TestSharedVectors also runs the shared set itself when it is there.
const (
	vectorsDir       = "testdata/capi-vectors"
	sharedVectorsDir = "../../../shared/capi-vectors"
)

type vectorFile struct {
	SourceRepo string   `json:"source_repo"`
	Commit     string   `json:"commit"`
	Vectors    []vector `json:"vectors"`
}

type vector struct {
	Field      string  `json:"field"`
	Input      *string `json:"input"`
	Normalized *string `json:"normalized"` // nil: the SDK refuses the value
	SHA256     *string `json:"sha256"`     // nil: refused, or sent unhashed (SentAs)
	SentAs     string  `json:"sent_as"`
	Source     string  `json:"source"`
	Note       string  `json:"note"`
}

// vectorFuncs maps a vector's field to our normaliser. Phone vectors carry
// no country: they are read as leads of an account whose default country is
// US, the SDK tests' numbers being North American.
var vectorFuncs = map[string]func(string) (string, bool){
	"em": Email,
	"ph": func(s string) (string, bool) {
		v, _, ok := Phone(s, "", "US")
		return v, ok
	},
	"fn":          Name,
	"ln":          Name,
	"ct":          City,
	"st":          func(s string) (string, bool) { return State(s, "") },
	"zp":          func(s string) (string, bool) { return Zip(s, "") },
	"country":     Country,
	"ge":          Gender,
	"db":          DateOfBirth,
	"external_id": ExternalID,
}

// notUsed are vector fields leadsignal has no normaliser for, and why.
var notUsed = map[string]string{
	"f5first":  "first 5 letters of fn: leadsignal always sends the full fn, which Meta prefers",
	"f5last":   "first 5 letters of ln: leadsignal always sends the full ln",
	"fi":       "first initial: leadsignal always sends the full fn",
	"dobd":     "day of birth alone: leadsignal sends the whole date as db",
	"dobm":     "month of birth alone: leadsignal sends the whole date as db",
	"doby":     "year of birth alone: leadsignal sends the whole date as db",
	"currency": "custom_data, not a match key: set where events are built (internal/capi)",
	"lead_id":  "Meta's lead id is sent raw by the event builder, not normalised or hashed",
}

// deviation is where our rule knowingly differs from an SDK's vector: what
// we produce instead ("" normalized = refused) and why.
type deviation struct {
	normalized, sha256, reason string
}

type vectorKey struct{ field, input string }

const (
	whyCountryCode = "no country code: leadsignal adds the default country's (+1) as Meta's docs require; no SDK adds one"
	whyPHPSanitize = "PHP SDK deletes illegal characters (FILTER_SANITIZE_EMAIL); leadsignal refuses rather than hash an address nobody may own"
	whyStateName   = "US state names become 2-letter codes (Meta docs, capi-param-builder, Segment); the Java SDK does not map them"
	whyNamePunct   = "punctuation is removed from names (Meta docs, capi-param-builder); the Java SDK only trims and lowercases"
	whyCountryName = "English country names are accepted (internal/country); the SDK refuses them"
	whyExternalID  = "leadsignal hashes external_id; the Python SDK sends it raw"
)

var deviations = map[vectorKey]deviation{
	{"em", "foo(.bar)@baz.com/"}: {"", "", whyPHPSanitize},
	{"em", `foo"@bar.com`}:       {"", "", whyPHPSanitize},
	{"em", "foo()@bar.com"}:      {"", "", whyPHPSanitize},

	{"ph", "123-456-7890"}:      {"11234567890", "cf14fe3c9d73fcb3574d2643988efb2db605b1c224725bd322d7d2350467b4dc", whyCountryCode},
	{"ph", "(123)-456-7890"}:    {"11234567890", "cf14fe3c9d73fcb3574d2643988efb2db605b1c224725bd322d7d2350467b4dc", whyCountryCode},
	{"ph", "   123456-7890   "}: {"11234567890", "cf14fe3c9d73fcb3574d2643988efb2db605b1c224725bd322d7d2350467b4dc", whyCountryCode},
	{"ph", "1234567890"}:        {"11234567890", "cf14fe3c9d73fcb3574d2643988efb2db605b1c224725bd322d7d2350467b4dc", whyCountryCode},
	{"ph", "777 747 (3515)"}:    {"17777473515", "2fc229fa77e1369330be9c9d85d0f4a5914018d91df0b675db9ee6b3b4c8e394", whyCountryCode},
	{"ph", "2062062006"}:        {"12062062006", "8588c405d93249d6d4bb99f2d2f16de41f8fb47479e7c539c3f928392157a457", whyCountryCode},
	{"ph", "44-12390821300A"}: {"", "", "no + or 00, so read as a US number (+1 441 239 082 1300), which is too long; " +
		"as +44 it is too long as well (UK numbers have 10 digits after 44); the PHP SDK only strips the letter"},

	{"fn", "firstname-2"}: {"firstname2", "e1386ae37899c2388d21aca0ed8936ce330f7bacfefddc005f069b4485e87faa", whyNamePunct},
	{"fn", "firstname-3"}: {"firstname3", "8689bc057ae81f353efd67e561d7779d0438fd3174529923775d8053d4013850", whyNamePunct},
	{"ln", "lastname-1"}:  {"lastname1", "c09bec42b0fe6d0166dbca22feeff854ec9047ee9b4be38d693f61105f4b6523", whyNamePunct},
	{"ln", "lastname-2"}:  {"lastname2", "2cff2420f1f2296fc3d7102aeb7f4cfad5bb27ef1682848c2564424abe522625", whyNamePunct},

	{"st", "California"}:       {"ca", "6959097001d10501ac7d54c0bdb8db61420f658f2922cc26e46d536119a31126", whyStateName},
	{"st", "North Carolina"}:   {"nc", "0be477336d3e1a8d45d820aa54755092e2ec5e0751ccdf93a8fa8fa1e10bd753", whyStateName},
	{"st", "Washington, D.C."}: {"dc", "abecdf3503635c0be9eca61cddf5b25c7f8380d5aae7d73d0f62e9a38c87b70d", whyStateName},

	{"country", "Germany"}:                  {"de", "959a45d44e6fcf58361ed004681556fe50129f2109e817dec098c00c9e5d2578", whyCountryName},
	{"country", "United States of America"}: {"us", "79adb2a2fce5c6ba215fe5f27f532d4e7edbac4b6a5e09e1ef3a08084a904621", whyCountryName},
	{"country", "*****UU*****"}:             {"", "", "UU is no ISO 3166-1 country; the PHP SDK only checks for 2 letters"},

	{"external_id", "123"}: {"123", "a665a45920422f9d417e4867efdc4fb8a04a1f3fff1fa07e998e86f7f7a27ae3", whyExternalID},
	{"external_id", "456"}: {"456", "b3a8e0e1f9ab1bfe3a36f231f676f78bb30a519d2b21e6c530c0eee8ebb4a5d0", whyExternalID},
}

func loadVectors(t *testing.T, dir string) map[string]vectorFile {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no vector files in %s", dir)
	}
	files := map[string]vectorFile{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var f vectorFile
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if len(f.Vectors) == 0 {
			t.Fatalf("%s: no vectors", p)
		}
		files[filepath.Base(p)] = f
	}
	return files
}

func TestVectors(t *testing.T) {
	used := runVectors(t, loadVectors(t, vectorsDir))
	for k := range deviations {
		if !used[k] {
			t.Errorf("deviation for %s %q matches no vector", k.field, k.input)
		}
	}
}

func TestSharedVectors(t *testing.T) {
	if _, err := os.Stat(sharedVectorsDir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("shared vectors missing in CI: %v", err)
		}
		t.Skipf("no shared vectors beside the repo (%v); TestVectors covers the testdata copy", err)
	}
	runVectors(t, loadVectors(t, sharedVectorsDir))
}

// runVectors checks every vector and reports which deviations it used.
func runVectors(t *testing.T, files map[string]vectorFile) map[vectorKey]bool {
	used := map[vectorKey]bool{}
	for name, f := range files {
		for i, v := range f.Vectors {
			t.Run(name+"/"+v.Field+"/"+strconv.Itoa(i), func(t *testing.T) {
				if v.Source == "" {
					t.Errorf("vector %d of %s names no source", i, name)
				}
				if why, ok := notUsed[v.Field]; ok {
					t.Skipf("%s not used by leadsignal: %s", v.Field, why)
				}
				if v.Input == nil {
					t.Skipf("vector has no input: %s", v.Note)
				}
				norm, ok := vectorFuncs[v.Field]
				if !ok {
					t.Fatalf("no normaliser and no reason for field %q", v.Field)
				}
				in := *v.Input
				// The file's own hash must be the hash of its normalised value.
				if v.Normalized != nil && v.SHA256 != nil {
					if got := Hash(*v.Normalized); got != *v.SHA256 {
						t.Errorf("vector sha256 %s is not Hash(%q) = %s", *v.SHA256, *v.Normalized, got)
					}
				}

				// What the SDK does, in our terms: the normalised value ("" =
				// refused) and its hash ("" = refused or sent unhashed).
				sdkNorm, sdkHash := "", ""
				if v.Normalized != nil {
					sdkNorm = *v.Normalized
				}
				if v.SHA256 != nil {
					sdkHash = *v.SHA256
				}
				wantNorm, wantHash := sdkNorm, sdkHash
				if d, ok := deviations[vectorKey{v.Field, in}]; ok {
					used[vectorKey{v.Field, in}] = true
					if d.normalized == sdkNorm && d.sha256 == sdkHash {
						t.Errorf("deviation for %q is stale: the SDK already gives %q", in, sdkNorm)
					}
					t.Logf("deviates from %s: %s", f.SourceRepo, d.reason)
					wantNorm, wantHash = d.normalized, d.sha256
				}

				got, ok := norm(in)
				if !ok {
					got = ""
				}
				if got != wantNorm {
					t.Errorf("%s(%q) = %q; want %q (source %s)", v.Field, in, got, wantNorm, v.Source)
				}
				if gotHash := keyOf(got).Hash; gotHash != wantHash {
					t.Errorf("%s(%q) hash = %q; want %q", v.Field, in, gotHash, wantHash)
				}
			})
		}
	}
	return used
}

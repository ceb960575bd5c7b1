package normalize

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// Input is a lead's raw contact data as posted.
type Input struct {
	Email, Phone, FirstName, LastName, City, State, Zip, Country, Gender, DateOfBirth string

	// ExternalID is the advertiser's own id of the lead.
	ExternalID string

	// ClientIP and UserAgent are the visitor's, as forwarded by the caller.
	ClientIP, UserAgent string

	// FBC and FBP are the _fbc and _fbp cookies; FBCLID is the fbclid
	// query parameter of the landing page, as captured.
	FBC, FBP, FBCLID string

	// CapturedAt is the lead's capture time; a rebuilt fbc uses it in ms.
	CapturedAt time.Time

	// DefaultCountry is the account's default country (ISO alpha-2, may be "").
	DefaultCountry string
}

// Key is one hashed match key: the normalised value (for display on the lead
// page) and its SHA-256 hex. A Key with a Normalized value but no Hash was kept
// but cannot be sent (a phone number that is not possible, see
// Keys.Problems); a Key with a Hash always has a Normalized value.
type Key struct {
	Normalized string `json:"normalized,omitempty"`
	Hash       string `json:"hash,omitempty"`
}

// Present reports whether k can be sent to Meta, that is whether it has a hash.
func (k Key) Present() bool { return k.Hash != "" }

// Keys is every match key a lead can carry.
type Keys struct {
	Email       Key `json:"em,omitzero"`
	Phone       Key `json:"ph,omitzero"`
	FirstName   Key `json:"fn,omitzero"`
	LastName    Key `json:"ln,omitzero"`
	City        Key `json:"ct,omitzero"`
	State       Key `json:"st,omitzero"`
	Zip         Key `json:"zp,omitzero"`
	Country     Key `json:"country,omitzero"`
	Gender      Key `json:"ge,omitzero"`
	DateOfBirth Key `json:"db,omitzero"`
	ExternalID  Key `json:"external_id,omitzero"`

	ClientIP  string `json:"client_ip_address,omitempty"`
	UserAgent string `json:"client_user_agent,omitempty"`

	FBC        string `json:"fbc,omitempty"`
	FBCRebuilt bool   `json:"fbc_rebuilt,omitempty"`
	FBP        string `json:"fbp,omitempty"`

	PhoneCountry string `json:"phone_country,omitempty"` // region of the parsed phone, e.g. "US"

	Problems []Problem `json:"problems,omitempty"`
}

// PhoneRegion is the region of the phone when it parsed (it has a hash),
// "" otherwise: what a lead's phone_country holds.
func (k Keys) PhoneRegion() string {
	if k.Phone.Hash == "" {
		return ""
	}
	return k.PhoneCountry
}

// Problem is a value that was given but could not be used as a match key.
// Field is Meta's name of the key (em, ph, ..., fbc, fbp), as in Keys.Missing.
type Problem struct {
	Field  string `json:"field"`
	Value  string `json:"value"` // the raw value, kept so a person can fix it
	Reason string `json:"reason"`
}

// Meta's user_data names of the keys, in the order Missing reports them.
const (
	FieldEmail       = "em"
	FieldPhone       = "ph"
	FieldFirstName   = "fn"
	FieldLastName    = "ln"
	FieldCity        = "ct"
	FieldState       = "st"
	FieldZip         = "zp"
	FieldCountry     = "country"
	FieldGender      = "ge"
	FieldDateOfBirth = "db"
	FieldExternalID  = "external_id"
	FieldClientIP    = "client_ip_address"
	FieldUserAgent   = "client_user_agent"
	FieldFBC         = "fbc"
	FieldFBP         = "fbp"
)

// Normalize turns a lead's raw contact data into its match keys. Values that
// are given but unusable are left out and listed in Keys.Problems; empty
// values are simply absent.
func Normalize(in Input) Keys {
	var k Keys
	// The lead's own country decides phone, state and zip rules; the
	// account's default only fills in when the lead has none (or an unknown one).
	cc := rulesCountry(in.Country, in.DefaultCountry)

	k.Email = k.hashed(FieldEmail, in.Email, email)
	k.Phone, k.PhoneCountry = k.phone(in.Phone, in.Country, in.DefaultCountry)
	k.FirstName = k.hashed(FieldFirstName, in.FirstName, name)
	k.LastName = k.hashed(FieldLastName, in.LastName, name)
	k.City = k.hashed(FieldCity, in.City, city)
	k.State = k.hashed(FieldState, in.State, func(s string) (string, string) { return state(s, cc) })
	k.Zip = k.hashed(FieldZip, in.Zip, func(s string) (string, string) { return zip(s, cc) })
	k.Country = k.hashed(FieldCountry, in.Country, countryKey)
	k.Gender = k.hashed(FieldGender, in.Gender, gender)
	k.DateOfBirth = k.hashed(FieldDateOfBirth, in.DateOfBirth, func(s string) (string, string) {
		return dateOfBirthAt(s, in.CapturedAt)
	})
	k.ExternalID = k.hashed(FieldExternalID, in.ExternalID, externalID)

	k.ClientIP = k.plain(FieldClientIP, in.ClientIP, clientIP)
	k.UserAgent = strings.TrimSpace(in.UserAgent)
	k.fbc(in.FBC, in.FBCLID, in.CapturedAt)
	k.FBP = k.plain(FieldFBP, in.FBP, fbp)
	return k
}

// normalizer is the inside of every exported normaliser: it returns the
// normalised value, or a reason why a non-empty raw value is unusable. Both
// are "" when raw is empty (absent, not a problem).
type normalizer func(raw string) (value, reason string)

func (k *Keys) problem(field, raw, reason string) {
	k.Problems = append(k.Problems, Problem{Field: field, Value: raw, Reason: reason})
}

func (k *Keys) hashed(field, raw string, f normalizer) Key {
	v, why := f(raw)
	if why != "" {
		k.problem(field, raw, why)
		return Key{}
	}
	return keyOf(v)
}

func (k *Keys) plain(field, raw string, f normalizer) string {
	v, why := f(raw)
	if why != "" {
		k.problem(field, raw, why)
		return ""
	}
	return v
}

func (k *Keys) phone(raw, leadCountry, defaultCountry string) (Key, string) {
	v, region, why := phone(raw, leadCountry, defaultCountry)
	if why != "" {
		k.problem(FieldPhone, raw, why)
		// Kept raw (not hashed) so the lead page shows what was typed.
		return Key{Normalized: strings.TrimSpace(raw)}, region
	}
	return keyOf(v), region
}

func (k *Keys) fbc(cookie, fbclid string, capturedAt time.Time) {
	cookie, fbclid = strings.TrimSpace(cookie), strings.TrimSpace(fbclid)
	if cookie != "" && validFBC(cookie) {
		k.FBC = cookie
		return
	}
	v, why := rebuildFBC(fbclid, capturedAt)
	switch {
	case cookie != "" && v != "":
		k.problem(FieldFBC, cookie, "malformed _fbc cookie, rebuilt from fbclid")
	case cookie != "":
		k.problem(FieldFBC, cookie, "malformed _fbc cookie and no fbclid to rebuild it")
	}
	if why != "" {
		k.problem(FieldFBC, fbclid, why)
	}
	k.FBC, k.FBCRebuilt = v, v != ""
}

// keyOf hashes a normalised value; "" stays absent and a value that already
// is a SHA-256 is not hashed again.
func keyOf(v string) Key {
	switch {
	case v == "":
		return Key{}
	case IsHashed(v):
		v = strings.ToLower(v)
		return Key{Normalized: v, Hash: v}
	}
	return Key{Normalized: v, Hash: Hash(v)}
}

// Hash is the lowercase hex SHA-256 of a normalised value. Callers never pass
// "": an empty key is absent, not the hash of nothing.
func Hash(normalized string) string {
	sum := sha256.Sum256([]byte(normalized))
	return hex.EncodeToString(sum[:])
}

// IsHashed reports whether s is 64 hex digits (any case), that is already a
// SHA-256 that must not be hashed again.
func IsHashed(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := range len(s) {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// fieldNames are Meta's names of every key, in Missing's order.
var fieldNames = []string{FieldEmail, FieldPhone, FieldFirstName, FieldLastName, FieldCity, FieldState, FieldZip,
	FieldCountry, FieldGender, FieldDateOfBirth, FieldExternalID, FieldClientIP, FieldUserAgent, FieldFBC, FieldFBP}

// Field is the key Meta names name, as user_data carries it: the hash of a
// hashed key (which UserData sends as a one-element list), the value of a
// plain one (client_ip_address, client_user_agent, fbc, fbp). present is
// false when the lead lacks the key, or name names none.
func (k *Keys) Field(name string) (value string, hashed, present bool) {
	var key *Key
	switch name {
	case FieldEmail:
		key = &k.Email
	case FieldPhone:
		key = &k.Phone
	case FieldFirstName:
		key = &k.FirstName
	case FieldLastName:
		key = &k.LastName
	case FieldCity:
		key = &k.City
	case FieldState:
		key = &k.State
	case FieldZip:
		key = &k.Zip
	case FieldCountry:
		key = &k.Country
	case FieldGender:
		key = &k.Gender
	case FieldDateOfBirth:
		key = &k.DateOfBirth
	case FieldExternalID:
		key = &k.ExternalID
	case FieldClientIP:
		return k.ClientIP, false, k.ClientIP != ""
	case FieldUserAgent:
		return k.UserAgent, false, k.UserAgent != ""
	case FieldFBC:
		return k.FBC, false, k.FBC != ""
	case FieldFBP:
		return k.FBP, false, k.FBP != ""
	default:
		return "", false, false
	}
	return key.Hash, true, key.Present()
}

// Missing lists Meta's names of the keys the lead lacks, in the order em, ph,
// fn, ln, ct, st, zp, country, ge, db, external_id, client_ip_address,
// client_user_agent, fbc, fbp.
func (k Keys) Missing() []string {
	var missing []string
	for _, name := range fieldNames {
		if _, _, present := k.Field(name); !present {
			missing = append(missing, name)
		}
	}
	return missing
}

// UserData is the lead's keys in the shape of Meta's user_data: hashed keys
// as a one-element []string, client_ip_address, client_user_agent, fbc and
// fbp as plain strings. Only present keys are included.
func (k Keys) UserData() map[string]any {
	ud := make(map[string]any, len(fieldNames))
	for _, name := range fieldNames {
		switch v, hashed, present := k.Field(name); {
		case !present:
		case hashed:
			ud[name] = []string{v}
		default:
			ud[name] = v
		}
	}
	return ud
}

// HasContactKey reports whether the lead carries at least one of em, ph,
// external_id or fbc, the keys that can match it to a person on their own.
func (k Keys) HasContactKey() bool {
	return k.Email.Present() || k.Phone.Present() || k.ExternalID.Present() || k.FBC != ""
}

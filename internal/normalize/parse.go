package normalize

import (
	"encoding/json"
	"unicode/utf8"
)

// ParseKeys decodes stored match keys, the JSON that json.Marshal makes of
// Keys, into what json.Unmarshal would give. The dispatcher reads a
// thousand per batch, and encoding/json spends most of that time on what
// this shape never has (whitespace, escapes, unknown fields): those, and
// anything else unexpected, still go to encoding/json.
func ParseKeys(data []byte) (Keys, error) {
	var k Keys
	if k.parse(data) {
		return k, nil
	}
	k = Keys{}
	err := json.Unmarshal(data, &k)
	return k, err
}

// parse decodes data when it is in the shape json.Marshal writes, and
// reports whether it was.
func (k *Keys) parse(data []byte) bool {
	p := scanner{b: data}
	if !p.skip('{') {
		return false
	}
	if p.skip('}') {
		return p.done()
	}
	for {
		name, ok := p.str()
		if !ok || !p.skip(':') {
			return false
		}
		if key := k.hashedField(name); key != nil {
			ok = p.key(key)
		} else if s := k.plainField(name); s != nil {
			*s, ok = p.str()
		} else if name == "fbc_rebuilt" {
			k.FBCRebuilt, ok = p.boolean()
		} else {
			return false // problems, or a name encoding/json matches loosely
		}
		if !ok {
			return false
		}
		if p.skip('}') {
			return p.done()
		}
		if !p.skip(',') {
			return false
		}
	}
}

func (k *Keys) hashedField(name string) *Key {
	switch name {
	case FieldEmail:
		return &k.Email
	case FieldPhone:
		return &k.Phone
	case FieldFirstName:
		return &k.FirstName
	case FieldLastName:
		return &k.LastName
	case FieldCity:
		return &k.City
	case FieldState:
		return &k.State
	case FieldZip:
		return &k.Zip
	case FieldCountry:
		return &k.Country
	case FieldGender:
		return &k.Gender
	case FieldDateOfBirth:
		return &k.DateOfBirth
	case FieldExternalID:
		return &k.ExternalID
	}
	return nil
}

func (k *Keys) plainField(name string) *string {
	switch name {
	case FieldClientIP:
		return &k.ClientIP
	case FieldUserAgent:
		return &k.UserAgent
	case FieldFBC:
		return &k.FBC
	case FieldFBP:
		return &k.FBP
	case "phone_country":
		return &k.PhoneCountry
	}
	return nil
}

// scanner reads the compact JSON of Keys; every method reports false on
// anything else.
type scanner struct {
	b []byte
	i int
}

func (p *scanner) skip(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *scanner) done() bool { return p.i == len(p.b) }

// str reads a string without escapes, in valid UTF-8.
func (p *scanner) str() (string, bool) {
	if !p.skip('"') {
		return "", false
	}
	start, ascii := p.i, true
	for ; p.i < len(p.b); p.i++ {
		switch c := p.b[p.i]; {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			if !ascii && !utf8.Valid(s) {
				return "", false
			}
			return string(s), true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

func (p *scanner) boolean() (bool, bool) {
	for _, lit := range []string{"true", "false"} {
		if len(p.b)-p.i >= len(lit) && string(p.b[p.i:p.i+len(lit)]) == lit {
			p.i += len(lit)
			return lit == "true", true
		}
	}
	return false, false
}

// key reads {"normalized":"...","hash":"..."}, either field optional.
func (p *scanner) key(k *Key) bool {
	if !p.skip('{') {
		return false
	}
	if p.skip('}') {
		return true
	}
	for {
		name, ok := p.str()
		if !ok || !p.skip(':') {
			return false
		}
		switch name {
		case "normalized":
			k.Normalized, ok = p.str()
		case "hash":
			k.Hash, ok = p.str()
		default:
			return false
		}
		if !ok {
			return false
		}
		if p.skip('}') {
			return true
		}
		if !p.skip(',') {
			return false
		}
	}
}

package junk

import (
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// keyword is one phrase ready for matching: pattern is the folded phrase
// between spaces (" seo services "), or without the trailing space for a
// prefix phrase ending in *.
type keyword struct {
	phrase  string // as written, without a trailing *, for the reason
	pattern string
}

// fold reduces text to lowercase words of letters and digits without
// accents, joined and surrounded by single spaces, so that a phrase matches
// whole words whatever the case, accents, punctuation or spacing:
// "SEO-Dienstleistungen!" and "seo dienstleistungen" both fold to
// " seo dienstleistungen ".
func fold(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(' ')
	space := true
	word := func(ok bool) bool {
		if !ok && !space {
			b.WriteByte(' ')
			space = true
		}
		return ok
	}
	if isASCII(s) {
		// ASCII needs no normalisation; this is most messages.
		for i := 0; i < len(s); i++ {
			c := s[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if word('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
				b.WriteByte(c)
				space = false
			}
		}
		word(false)
		return b.String()
	}
	// NFKD splits accented letters into letter + mark and maps
	// compatibility forms (ligatures, full-width letters) to plain ones.
	for _, r := range norm.NFKD.String(s) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		r = unicode.ToLower(r)
		if !word(unicode.IsLetter(r) || unicode.IsDigit(r)) {
			continue
		}
		switch r {
		case 'ı': // Turkish dotless i
			b.WriteByte('i')
		case 'ß':
			b.WriteString("ss")
		case 'æ':
			b.WriteString("ae")
		case 'œ':
			b.WriteString("oe")
		case 'ø':
			b.WriteByte('o')
		case 'đ':
			b.WriteByte('d')
		case 'ł':
			b.WriteByte('l')
		default:
			b.WriteRune(r)
		}
		space = false
	}
	word(false)
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func compileKeyword(kw string) keyword {
	phrase := strings.TrimSpace(kw)
	prefix := strings.HasSuffix(phrase, "*")
	phrase = strings.TrimSpace(strings.TrimRight(phrase, "*"))
	pattern := fold(phrase)
	if strings.TrimSpace(pattern) == "" {
		return keyword{phrase: phrase}
	}
	if prefix {
		pattern = strings.TrimSuffix(pattern, " ")
	}
	return keyword{phrase: phrase, pattern: pattern}
}

// matcher finds the phrases of one list in folded text. It indexes the
// phrases by their first word, so a message costs a map lookup per word
// rather than a search per phrase.
type matcher struct {
	keywords []keyword
	byFirst  map[string][]int // first word -> indexes of phrases starting with it
	prefixes []int            // one-word prefix phrases ("bewerbung*")
}

func newMatcher(kws []string) *matcher {
	m := &matcher{byFirst: map[string][]int{}}
	for _, kw := range kws {
		k := compileKeyword(kw)
		if k.pattern == "" {
			continue
		}
		i := len(m.keywords)
		m.keywords = append(m.keywords, k)
		first, rest, _ := strings.Cut(k.pattern[1:], " ")
		if rest == "" && !strings.HasSuffix(k.pattern, " ") {
			m.prefixes = append(m.prefixes, i)
			continue
		}
		m.byFirst[first] = append(m.byFirst[first], i)
	}
	return m
}

// find returns the first phrase of the list that text (folded) contains.
func (m *matcher) find(text string) (keyword, bool) {
	best := len(m.keywords)
	for i := 1; i < len(text); {
		j := i + strings.IndexByte(text[i:], ' ')
		if j < i {
			break
		}
		word := text[i:j]
		for _, k := range m.byFirst[word] {
			if k < best && strings.HasPrefix(text[i-1:], m.keywords[k].pattern) {
				best = k
			}
		}
		for _, k := range m.prefixes {
			if k < best && strings.HasPrefix(word, m.keywords[k].pattern[1:]) {
				best = k
			}
		}
		i = j + 1
	}
	if best == len(m.keywords) {
		return keyword{}, false
	}
	return m.keywords[best], true
}

// builtin holds the matchers of the default phrase lists.
var builtin = sync.OnceValue(func() map[Signal]*matcher {
	return map[Signal]*matcher{
		VendorPitch:    newMatcher(DefaultKeywords(VendorPitch)),
		JobApplication: newMatcher(DefaultKeywords(JobApplication)),
	}
})

// overrides caches the matchers of accounts' own phrase lists: Check runs
// on every lead, and an account's list rarely changes. The cache is
// emptied when full rather than tracking use.
var overrides struct {
	sync.Mutex
	m map[string]*matcher
}

const maxCachedOverrides = 256

func overrideMatcher(kws []string) *matcher {
	key := strings.Join(kws, "\x00")
	overrides.Lock()
	m, ok := overrides.m[key]
	overrides.Unlock()
	if ok {
		return m
	}
	m = newMatcher(kws)
	overrides.Lock()
	defer overrides.Unlock()
	if len(overrides.m) >= maxCachedOverrides || overrides.m == nil {
		overrides.m = map[string]*matcher{}
	}
	overrides.m[key] = m
	return m
}

// mentions reports the first phrase of the list (the account's own, else
// the built-in list of sig) that the folded message text contains.
func mentions(text string, own []string, sig Signal) string {
	if strings.TrimSpace(text) == "" {
		return ""
	}
	m := builtin()[sig]
	if len(own) > 0 {
		m = overrideMatcher(own)
	}
	if k, ok := m.find(text); ok {
		return fmt.Sprintf("message mentions %q", truncate(k.phrase, maxKeywordLen))
	}
	return ""
}

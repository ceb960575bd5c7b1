package demo

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// The demo's people: Chicago-area homeowners and a few businesses, with
// addresses at free mailbox providers and at (made-up) work domains. IP
// addresses are from the ranges set aside for documentation (RFC 5737).

var firstNames = []string{
	"James", "Maria", "Robert", "Jennifer", "Michael", "Linda", "David", "Patricia", "William", "Elizabeth",
	"Daniel", "Susan", "Matthew", "Jessica", "Anthony", "Sarah", "Mark", "Karen", "Steven", "Nancy",
	"Andrew", "Lisa", "Joshua", "Ashley", "Kevin", "Emily", "Brian", "Michelle", "Jose", "Amanda",
	"Tyrone", "Keisha", "Luis", "Rosa", "Wei", "Mei", "Arjun", "Priya", "Tomasz", "Agnieszka",
	"Kwame", "Aisha", "Sean", "Colleen", "Derek", "Tanya", "Omar", "Fatima", "Grace", "Ethan",
}

var lastNames = []string{
	"Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Rodriguez", "Martinez",
	"Hernandez", "Lopez", "Wilson", "Anderson", "Thomas", "Taylor", "Moore", "Jackson", "Martin", "Lee",
	"Thompson", "White", "Harris", "Clark", "Lewis", "Robinson", "Walker", "Young", "Allen", "King",
	"Kowalski", "Nowak", "Chen", "Wang", "Patel", "Shah", "O'Brien", "Murphy", "Novak", "Okafor",
	"Washington", "Brooks", "Sullivan", "Schmidt", "Fischer", "Nguyen", "Kim", "Rivera", "Flores", "Gomez",
}

// place is a town of the service area with one of its ZIP codes.
type place struct{ city, zip string }

var places = []place{
	{"Chicago", "60614"}, {"Chicago", "60618"}, {"Chicago", "60625"}, {"Chicago", "60640"}, {"Chicago", "60657"},
	{"Evanston", "60201"}, {"Oak Park", "60302"}, {"Skokie", "60076"}, {"Naperville", "60540"},
	{"Schaumburg", "60193"}, {"Aurora", "60506"}, {"Joliet", "60435"}, {"Wheaton", "60187"},
	{"Downers Grove", "60515"}, {"Arlington Heights", "60004"}, {"Des Plaines", "60016"},
}

// areaCodes are the Chicago area's.
var areaCodes = []string{"312", "773", "872", "630", "331", "847", "224", "708", "815", "779"}

var freeMail = []string{
	"gmail.com", "gmail.com", "gmail.com", "gmail.com", "yahoo.com", "yahoo.com", "outlook.com",
	"hotmail.com", "icloud.com", "aol.com", "comcast.net", "sbcglobal.net",
}

var workDomains = []string{
	"lakeshorepm.com", "prairiegrouprealty.com", "northshorehoa.org", "kesslerdental.com",
	"hollowaylaw.com", "brightwaterlogistics.com", "oakbrookrealty.com", "midwaybakery.com",
	"riversidechurch-il.org", "foxvalleyschools.org", "greenleafapartments.com", "summitcpa.com",
}

var disposableMail = []string{"mailinator.com", "guerrillamail.com", "yopmail.com", "10minutemail.com"}

var userAgents = []string{
	"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
	"Mozilla/5.0 (Linux; Android 14; SM-S918U) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.6478.122 Mobile Safari/537.36",
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
	"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:127.0) Gecko/20100101 Firefox/127.0",
}

// inAppAgents are Facebook's and Instagram's in-app browsers, where most
// paid social clicks land.
var inAppAgents = []string{
	"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/470.0.0.38.109;FBBV/613251204;FBDV/iPhone15,2;FBMD/iPhone;FBSN/iOS;FBSV/17.5;FBSS/3;FBCR/;FBID/phone;FBLC/en_US;FBOP/80]",
	"Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240605.024; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/126.0.6478.122 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/471.0.0.35.79;]",
	"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 337.0.3.23.54 (iPhone14,5; iOS 17_5; en_US; en; scale=3.00; 1170x2532; 614315208)",
}

var ipRanges = []string{"192.0.2.", "198.51.100.", "203.0.113."}

// person is someone who writes in.
type person struct {
	first, last, email, phone string
	place                     place
	work                      bool // the email is at a work domain
}

// people makes people, each with an email and a phone no other person
// has: a repeat contact is made on purpose, never by chance.
type people struct {
	rng    *rand.Rand
	emails map[string]bool
	phones map[string]bool
}

func newPeople(rng *rand.Rand) *people {
	return &people{rng: rng, emails: map[string]bool{}, phones: map[string]bool{}}
}

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// person makes a new person; work says whether their email is at a work
// domain.
func (p *people) person(work bool) person {
	r := p.rng
	x := person{first: pick(r, firstNames), last: pick(r, lastNames), place: pick(r, places), work: work}
	domain := pick(r, freeMail)
	if work {
		domain = pick(r, workDomains)
	}
	x.email = p.email(x.first, x.last, domain)
	x.phone = p.phone()
	return x
}

// email is a free address for the name at domain.
func (p *people) email(first, last, domain string) string {
	f := strings.ToLower(first)
	l := strings.ToLower(strings.ReplaceAll(last, "'", ""))
	var local string
	switch p.rng.IntN(5) {
	case 0:
		local = f + "." + l
	case 1:
		local = f + l
	case 2:
		local = f[:1] + l
	case 3:
		local = f + "_" + l
	default:
		local = fmt.Sprintf("%s%s%d", f, l[:1], 10+p.rng.IntN(90))
	}
	addr := local + "@" + domain
	for n := 2; p.emails[addr]; n++ {
		addr = fmt.Sprintf("%s%d@%s", local, n, domain)
	}
	p.emails[addr] = true
	return addr
}

// phone is a new Chicago-area number, written the ways people type them;
// never a 555 number nor an N11 exchange.
func (p *people) phone() string {
	r := p.rng
	for {
		area := pick(r, areaCodes)
		exchange := fmt.Sprintf("%d%d%d", 2+r.IntN(8), r.IntN(10), r.IntN(10))
		if exchange == "555" || exchange[1:] == "11" {
			continue
		}
		line := fmt.Sprintf("%04d", r.IntN(10000))
		if p.phones[area+exchange+line] {
			continue
		}
		p.phones[area+exchange+line] = true
		switch r.IntN(4) {
		case 0:
			return fmt.Sprintf("(%s) %s-%s", area, exchange, line)
		case 1:
			return area + "-" + exchange + "-" + line
		case 2:
			return "+1 " + area + " " + exchange + " " + line
		}
		return area + exchange + line
	}
}

// ip is a visitor's address.
func (p *people) ip() string {
	return fmt.Sprintf("%s%d", pick(p.rng, ipRanges), 1+p.rng.IntN(254))
}

// digits is n random digits, the first not 0.
func digits(rng *rand.Rand, n int) string {
	var b strings.Builder
	b.WriteByte(byte('1' + rng.IntN(9)))
	for range n - 1 {
		b.WriteByte(byte('0' + rng.IntN(10)))
	}
	return b.String()
}

// token is n random letters and digits, like an fbclid's.
func token(rng *rand.Rand, n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

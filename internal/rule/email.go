package rule

// freeDomains are the mailbox providers where anyone can open an address
// for free: an address there says nothing about the sender's employer.
// The list covers the large international and regional providers; a
// domain missing from it reads as a work address.
var freeDomains = set(
	// Google, Microsoft, Yahoo, Apple, AOL, Proton and other global ones.
	"gmail.com", "googlemail.com",
	"hotmail.com", "hotmail.co.uk", "hotmail.fr", "hotmail.de", "hotmail.it", "hotmail.es",
	"outlook.com", "outlook.fr", "outlook.de", "outlook.es", "live.com", "live.co.uk", "live.fr",
	"live.de", "live.nl", "msn.com", "windowslive.com",
	"yahoo.com", "yahoo.co.uk", "yahoo.fr", "yahoo.de", "yahoo.es", "yahoo.it", "yahoo.ca",
	"yahoo.com.au", "yahoo.com.br", "yahoo.co.in", "yahoo.co.jp", "ymail.com", "rocketmail.com",
	"icloud.com", "me.com", "mac.com",
	"aol.com", "aim.com", "proton.me", "protonmail.com", "pm.me", "tutanota.com", "tuta.io",
	"zoho.com", "zohomail.com", "mail.com", "email.com", "gmx.com", "gmx.net", "fastmail.com",
	"hey.com", "yandex.com", "inbox.com",
	// Europe.
	"gmx.de", "gmx.at", "gmx.ch", "web.de", "t-online.de", "freenet.de", "posteo.de", "mailbox.org",
	"orange.fr", "wanadoo.fr", "free.fr", "laposte.net", "sfr.fr", "libero.it", "virgilio.it",
	"tiscali.it", "alice.it", "btinternet.com", "sky.com", "virginmedia.com", "ntlworld.com",
	"seznam.cz", "wp.pl", "o2.pl", "onet.pl", "interia.pl", "mail.ru", "yandex.ru", "bk.ru",
	"list.ru", "inbox.ru", "rambler.ru", "ukr.net", "telenet.be", "skynet.be", "ziggo.nl",
	"kpnmail.nl", "bluewin.ch", "terra.es",
	// The Americas, Asia and Oceania.
	"comcast.net", "verizon.net", "att.net", "sbcglobal.net", "bellsouth.net", "cox.net",
	"charter.net", "earthlink.net", "juno.com", "shaw.ca", "rogers.com", "sympatico.ca",
	"bol.com.br", "uol.com.br", "terra.com.br", "qq.com", "163.com", "126.com", "sina.com",
	"naver.com", "daum.net", "hanmail.net", "rediffmail.com", "bigpond.com", "optusnet.com.au",
	"xtra.co.nz",
)

// roleLocals are local parts that name a function rather than a person:
// info@, sales@. Such an address reaches whoever reads the shared inbox.
var roleLocals = set(
	"abuse", "accounts", "accounting", "admin", "administrator", "billing", "booking", "bookings",
	"careers", "contact", "contactus", "customerservice", "enquiries", "enquiry", "finance", "hello",
	"help", "helpdesk", "hostmaster", "hr", "info", "inquiries", "inquiry", "jobs", "legal", "mail",
	"marketing", "media", "news", "newsletter", "no-reply", "noreply", "office", "orders", "postmaster",
	"press", "privacy", "reception", "sales", "security", "service", "support", "team", "webmaster",
)

func set(items ...string) map[string]struct{} {
	m := make(map[string]struct{}, len(items))
	for _, s := range items {
		m[s] = struct{}{}
	}
	return m
}

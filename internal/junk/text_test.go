package junk

import (
	"fmt"
	"testing"
)

func TestFold(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", " "},
		{"SEO-Dienstleistungen!", " seo dienstleistungen "},
		{"  Référencement   naturel ", " referencement naturel "},
		{"İŞ BAŞVURUSU, özgeçmiş", " is basvurusu ozgecmis "},
		{"ışık", " isik "},
		{"Straße", " strasse "},
		{"CV’mi", " cv mi "},
		{"ＳＥＯ ｓｅｒｖｉｃｅｓ", " seo services "},
		{"œuvre", " oeuvre "},
		{"hiring?", " hiring "},
	}
	for _, tt := range tests {
		if got := fold(tt.in); got != tt.want {
			t.Errorf("fold(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestVendorPitch(t *testing.T) {
	tests := []struct {
		message string
		want    string // the phrase named, "" when not a pitch
	}{
		{"Hi, we offer affordable SEO services to rank your website on the first page of Google.", "seo services"},
		{"I can get you high DA BACKLINKS for cheap", "backlinks"},
		{"Would you accept a guest post on your blog?", "guest post"},
		{"We are a digital marketing agency based in Delhi.", "digital marketing agency"},
		{"Is your site on the 1st page of Google? We can fix that.", "1st page of google"},
		{"We can help you get more leads every month.", "we can help you get more leads"},
		{"App development company with 10 years experience", "app development company"},
		{"Hola, ofrecemos servicios de SEO y posicionamiento web", "servicios de seo"},
		{"Aparezca en la primera pagina de google", "primera página de google"},
		{"Olá! Trabalhamos com criação de sites para empresas", "criação de sites"},
		{"Oferecemos servicos de seo com garantia", "serviços de seo"},
		{"Wir bieten professionelle Suchmaschinenoptimierung für Ihr Unternehmen", "suchmaschinenoptimierung"},
		{"Unsere SEO Dienstleistungen bringen Sie nach vorne", "seo-dienstleistungen"},
		{"Nous proposons le référencement naturel de votre site", "référencement naturel"},
		{"Besoin de REFERENCEMENT ?", "référencement"},
		{"Firmanız için SEO hizmeti sunuyoruz", "seo hizmeti"},
		{"WEB TASARIM HİZMETİ veriyoruz", "web tasarım hizmeti"},
		{"Web sitenizi Google'da ilk sayfaya taşıyalım", "google'da ilk sayfa"},
		{"Reply STOP to opt out", "reply stop"},
	}
	for _, tt := range tests {
		t.Run(tt.message, func(t *testing.T) {
			want := ""
			if tt.want != "" {
				want = fmt.Sprintf("message mentions %q", tt.want)
			}
			if got := only(t, VendorPitch, Setting{}, Input{Message: tt.message}); got != want {
				t.Errorf("vendorPitch(%q) = %q; want %q", tt.message, got, want)
			}
		})
	}
}

func TestJobApplication(t *testing.T) {
	tests := []struct {
		message string
		want    string
	}{
		{"Hello, I am applying for the position of receptionist. Please find my CV attached.", "applying for the position"},
		{"Are you hiring? I have 5 years experience in retail.", "are you hiring"},
		{"Please see my resume below", "my resume"},
		{"I would like to apply for a job at your store", "apply for a job"},
		{"Buenas tardes, busco trabajo como ayudante. Adjunto mi CV.", "busco trabajo"},
		{"Le envío mi hoja de vida para su consideración", "mi hoja de vida"},
		{"Bom dia, gostaria de enviar meu currículo para a vaga de emprego", "meu currículo"},
		{"segue curriculo em anexo", "segue currículo"},
		{"Sehr geehrte Damen und Herren, anbei meine Bewerbung und mein Lebenslauf", "bewerbung"},
		{"Haben Sie freie Stellen?", "freie stellen"},
		{"Bonjour, je vous envoie ma candidature spontanée et mon CV", "candidature spontanée"},
		{"Est-ce que vous recrutez ?", "vous recrutez"},
		{"Merhaba, iş başvurusu için özgeçmişimi gönderiyorum", "iş başvuru"},
		{"CV’mi ekte bulabilirsiniz", "cv'mi"},
		{"Açık pozisyonunuz var mı?", "açık pozisyon"},
	}
	for _, tt := range tests {
		t.Run(tt.message, func(t *testing.T) {
			want := ""
			if tt.want != "" {
				want = fmt.Sprintf("message mentions %q", tt.want)
			}
			if got := only(t, JobApplication, Setting{}, Input{Message: tt.message}); got != want {
				t.Errorf("jobApplication(%q) = %q; want %q", tt.message, got, want)
			}
		})
	}
}

// enquiries are real customer messages; none may look like junk.
var enquiries = []string{
	// English
	"I'd like a quote for a new roof",
	"Do you offer SEO for dentists?",
	"Can you help me rank my website? What do you charge?",
	"Can you send me a quote for replacing 12 windows?",
	"Looking for a job done on my bathroom, need a quote",
	"Hi, I came across your website and would like to book a consultation.",
	"I'm moving to Seoul next month and need international movers",
	"Is there a vacancy for two nights in August?",
	"We are hiring a contractor for our office renovation",
	"What's the cost of a Google Ads campaign for my restaurant?",
	"I want to apply for a mortgage, what documents do you need?",
	"I need a cover for my pool",
	"Please call me back about the kitchen job, after 5pm is best",
	"My daughter is looking for swimming lessons on weekends",
	"Is the apartment on Main St still available?",
	"What are your opening hours on Saturday?",
	// Spanish
	"Quiero una cotización",
	"Hola, necesito un presupuesto para reformar la cocina",
	"¿Tienen plaza vacante para mi hijo en septiembre?",
	"Me gustaría trabajar con ustedes en mi proyecto de reforma",
	"Necesito 10 puestos de trabajo para mi oficina",
	"Busco un abogado para un divorcio",
	"¿Cuál es el horario de atención?",
	// Portuguese
	"Gostaria de um orçamento",
	"Gostaria de um orçamento para instalação de ar condicionado",
	"Tem vaga para amanhã às 10h?",
	"Qual o valor da consulta?",
	"Preciso de um site para minha loja, quanto custa?",
	"Vocês trabalham aos sábados?",
	// German
	"Ich hätte gerne ein Angebot",
	"Ich hätte gerne ein Angebot für eine neue Heizung",
	"Können Sie mir einen Termin nächste Woche geben?",
	"Ich brauche Bewerbungsfotos, was kostet das?",
	"Wir suchen einen Handwerker für unser Bad",
	"Ist die Wohnung noch frei?",
	"Stellen Sie eine Rechnung aus?",
	// French
	"Je voudrais un devis",
	"Je voudrais un devis pour une cuisine équipée",
	"Bonjour, je souhaite déposer ma candidature pour l'appartement rue Victor Hugo",
	"Je suis en alternance et je cherche un studio",
	"Quels sont vos tarifs pour un mariage ?",
	"Je cherche un plombier disponible samedi",
	// Turkish
	"Fiyat teklifi almak istiyorum",
	"Sizinle çalışmak istiyorum, evim için teklif alabilir miyim?",
	"Randevu almak istiyorum",
	"Web sitenizi gördüm, fiyat bilgisi alabilir miyim?",
	"Cumartesi açık mısınız?",
	"İstanbul'da ev temizliği hizmeti arıyorum",
}

func TestEnquiriesAreNotJunk(t *testing.T) {
	for _, msg := range enquiries {
		t.Run(msg, func(t *testing.T) {
			if got := Check(Input{Message: msg}, Defaults()); got != nil {
				t.Errorf("Check(%q) = %v; want nil", msg, got)
			}
		})
	}
}

// TestDefaultKeywordsMatchThemselves also keeps the lists apart: a phrase
// in both would give a message two signals.
func TestDefaultKeywordsMatchThemselves(t *testing.T) {
	lists := map[Signal]Signal{VendorPitch: JobApplication, JobApplication: VendorPitch}
	for sig, other := range lists {
		seen := map[string]string{}
		for _, kw := range DefaultKeywords(sig) {
			k := compileKeyword(kw)
			if k.pattern == "" {
				t.Errorf("DefaultKeywords(%s): %q has no words", sig, kw)
				continue
			}
			if prev, ok := seen[k.pattern]; ok {
				t.Errorf("DefaultKeywords(%s): %q is the same phrase as %q", sig, kw, prev)
			}
			seen[k.pattern] = kw
			msg := "Hello. " + k.phrase + "xyz, thanks"
			if k.pattern[len(k.pattern)-1] == ' ' {
				msg = "Hello. " + k.phrase + ", thanks"
			}
			if got := mentions(fold(msg), nil, sig); got == "" {
				t.Errorf("%s(%q) = %q; want it to fire", sig, msg, got)
			}
			if got := mentions(fold(msg), nil, other); got != "" {
				t.Errorf("%s(%q) = %q; want only %s", other, msg, got, sig)
			}
		}
	}
	if got := DefaultKeywords(BadEmail); got != nil {
		t.Errorf("DefaultKeywords(%s) = %v; want nil", BadEmail, got)
	}
	kws := DefaultKeywords(VendorPitch)
	kws[0] = "changed"
	if DefaultKeywords(VendorPitch)[0] == "changed" {
		t.Errorf("DefaultKeywords returns the built-in list itself")
	}
}

func TestKeywordOverride(t *testing.T) {
	tests := []struct {
		name     string
		keywords []string
		message  string
		want     string
	}{
		{"override fires", []string{"Roof Repair"}, "We do roof repairs and ROOF REPAIR.", `message mentions "Roof Repair"`},
		{"built-in list is replaced", []string{"roof repair"}, "We offer SEO services", ""},
		{"whole words", []string{"seo"}, "Moving to Seoul", ""},
		{"prefix", []string{"bewerbung*"}, "Meine Bewerbungsunterlagen", `message mentions "bewerbung"`},
		{"accents both ways", []string{"curriculo"}, "Segue meu CURRÍCULO", `message mentions "curriculo"`},
		{"blank entries are skipped", []string{" ", "!!", "seo"}, "seo please", `message mentions "seo"`},
		{"empty list keeps the built-in list", []string{}, "We offer SEO services", `message mentions "seo services"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := only(t, VendorPitch, Setting{Keywords: tt.keywords}, Input{Message: tt.message})
			if got != tt.want {
				t.Errorf("vendorPitch(%q, keywords %q) = %q; want %q", tt.message, tt.keywords, got, tt.want)
			}
		})
	}
}

func BenchmarkCheck(b *testing.B) {
	in := Input{
		FillSeconds: ptr(30), Phone: "14155552671", PhoneNational: "4155552671", Email: "jane@example.com",
		Message: "Hi, I'd like a quote for a new roof on my two-storey house in Springfield. " +
			"The old one leaks after heavy rain. Could someone come by next week? Thanks, Jane",
	}
	s := Defaults()
	Check(in, s)
	for b.Loop() {
		Check(in, s)
	}
}

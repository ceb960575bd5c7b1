package junk

// The built-in phrase lists, per language. They aim at precision: phrases
// that read as a pitch or a job application, not single words a customer
// would also use ("Do you offer SEO for dentists?" is an enquiry). Phrases
// match whole words, ignoring case, accents and punctuation, so each is
// written once with its accents; a trailing * matches any word ending
// (Turkish suffixes, German compounds).

var vendorPitchEN = []string{
	"seo services", "seo service", "seo package", "seo packages", "seo agency", "seo company",
	"seo expert", "seo audit", "search engine optimization services", "search engine optimisation services",
	"rank your website", "rank your site", "ranking of your website", "your website ranking",
	"first page of google", "1st page of google", "page one of google", "top of google", "google first page",
	"increase your website traffic", "more traffic to your website", "boost your online presence",
	"web design services", "website design services", "web development services",
	"redesign your website", "website redesign",
	"app development company", "app development services", "software development company",
	"lead generation services", "lead generation agency", "we can help you get more leads",
	"generate more leads", "more leads for your business", "appointment setting services",
	"guest post", "guest posting", "sponsored post", "backlinks", "backlink", "link building", "domain authority",
	"outsourcing services", "outsourcing company", "offshore team", "hire dedicated developers",
	"virtual assistant services", "digital marketing services", "digital marketing agency",
	"social media marketing services", "social media management services", "google ads management",
	"grow your business", "reply stop",
}

var vendorPitchES = []string{
	"servicios de seo", "servicio de seo", "servicios seo", "agencia seo", "agencia de seo", "experto en seo",
	"auditoría seo", "posicionamiento web", "posicionamiento seo", "posicionamiento en google",
	"posicionar su web", "posicionar tu web", "posicionar su página", "posicionar su sitio",
	"primera página de google", "primeros lugares de google", "primeras posiciones de google",
	"primeros resultados de google", "servicios de diseño web", "rediseño de su web", "rediseño de su página",
	"desarrollo de aplicaciones móviles", "desarrollo de software a medida",
	"agencia de marketing digital", "servicios de marketing digital", "somos una agencia",
	"generación de leads", "generación de prospectos", "más clientes para su negocio",
	"más clientes para tu negocio", "aumentar el tráfico de su web", "más tráfico a su web",
	"enlaces de calidad", "artículo patrocinado", "artículos patrocinados", "publicación patrocinada",
	"gestión de redes sociales", "campañas de google ads", "servicios de outsourcing",
	"le ofrecemos nuestros servicios", "ofrecerle nuestros servicios", "presentarle nuestros servicios",
}

var vendorPitchPT = []string{
	"serviços de seo", "serviço de seo", "especialista em seo", "consultoria seo",
	"otimização de sites", "otimização para mecanismos de busca", "primeira página do google",
	"topo do google", "primeiras posições do google", "posicionamento no google",
	"criação de sites", "criação de site", "criação de lojas virtuais", "desenvolvimento de sites",
	"desenvolvimento de aplicativos", "desenvolvimento de software sob medida",
	"somos uma agência", "marketing digital para sua empresa",
	"gestão de redes sociais", "gestão de tráfego pago", "geração de leads",
	"mais clientes para sua empresa", "mais clientes para o seu negócio", "aumentar o tráfego do seu site",
	"mais visitas no seu site", "post patrocinado", "artigo patrocinado", "terceirização de serviços",
	"apresentar nossos serviços", "apresentar os nossos serviços", "oferecer nossos serviços",
	"oferecer os nossos serviços",
}

var vendorPitchDE = []string{
	"suchmaschinenoptimierung", "seo-dienstleistungen", "seo-agentur", "seo-optimierung", "seo-experte",
	"seo-analyse", "erste seite bei google", "erste seite von google", "seite 1 bei google",
	"top-platzierung", "top-platzierungen", "besseres google-ranking", "ihr google-ranking",
	"ranking ihrer website", "mehr besucher auf ihrer website", "mehr traffic für ihre website",
	"webdesign-dienstleistungen", "webdesign-agentur", "app-entwicklung", "individuelle softwareentwicklung",
	"online-marketing-agentur", "digitalagentur", "leadgenerierung", "lead-generierung",
	"mehr kunden für ihr unternehmen", "neukundengewinnung", "gastbeitrag", "gastartikel", "linkaufbau",
	"outsourcing-dienstleistungen", "offshore-entwicklung", "social-media-marketing",
	"social-media-betreuung", "unsere dienstleistungen vorstellen", "ihnen unsere dienstleistungen",
	"kooperationsanfrage",
}

var vendorPitchFR = []string{
	"services de seo", "services seo", "agence seo", "expert seo", "audit seo",
	"référencement naturel", "améliorer votre référencement", "première page de google",
	"premières positions sur google", "premiers résultats de google", "positionnement sur google",
	"votre visibilité sur google", "améliorer votre visibilité", "augmenter votre visibilité",
	"création de sites internet", "création de site web", "refonte de votre site",
	"développement d'applications mobiles", "développement de logiciels sur mesure", "agence web",
	"agence de marketing digital", "agence de communication digitale", "génération de leads",
	"génération de prospects", "plus de clients pour votre entreprise", "augmenter votre chiffre d'affaires",
	"augmenter le trafic de votre site", "netlinking", "article sponsorisé", "article invité",
	"services d'externalisation", "gestion des réseaux sociaux", "vous proposer nos services",
	"vous présenter nos services", "présenter notre agence", "nous sommes une agence", "référencement",
}

var vendorPitchTR = []string{
	"seo hizmeti", "seo hizmetleri", "seo hizmetimiz", "seo çalışması", "seo ajansı", "seo uzmanı",
	"arama motoru optimizasyonu", "web tasarım hizmeti", "web tasarım hizmetleri", "web tasarım ajansı",
	"web sitenizin sıralaması", "google'da ilk sayfa*", "google ilk sayfa*", "google'da ilk sıra*",
	"google'da üst sıra*", "mobil uygulama geliştirme", "yazılım geliştirme hizmeti",
	"özel yazılım geliştirme", "dijital pazarlama ajansı", "dijital pazarlama hizmeti",
	"dijital pazarlama hizmetleri", "sosyal medya yönetimi", "sosyal medya yönetim hizmeti",
	"google ads yönetimi", "reklam yönetimi hizmeti", "potansiyel müşteri kazanımı",
	"satışlarınızı artır*", "işletmenizi büyüt*", "backlink hizmeti", "tanıtım yazısı", "misafir yazar",
	"dış kaynak hizmeti", "hizmetlerimizi tanıtmak", "hizmetlerimizi sunmak", "firmanıza özel",
}

var jobApplicationEN = []string{
	"job application", "application for the position", "application for the post",
	"applying for the position", "applying for a position", "applying for the role", "apply for the position",
	"apply for a job", "applying for a job", "my resume", "attached resume", "resume attached",
	"attached is my resume", "attached my cv", "my cv", "cv attached", "curriculum vitae", "cover letter",
	"looking for a new job", "looking for a job as", "looking for employment", "seeking employment",
	"job opening", "job openings", "job vacancy", "job vacancies", "job opportunity", "job opportunities",
	"employment opportunities", "are you hiring", "are you guys hiring", "are you currently hiring",
	"still hiring", "if you are hiring", "hire me", "internship", "work for your company",
	"work at your company", "join your team", "position available", "part time job", "full time job",
}

var jobApplicationES = []string{
	"solicitud de empleo", "solicitud de trabajo", "busco trabajo", "busco empleo", "buscando trabajo",
	"buscando empleo", "oferta de empleo", "oferta de trabajo", "ofertas de empleo", "ofertas de trabajo",
	"vacante de empleo", "vacante de trabajo", "puesto vacante", "mi currículum", "mi cv", "adjunto mi cv",
	"adjunto cv", "mi hoja de vida", "adjunto hoja de vida", "postularme", "postulación", "me postulo",
	"trabajar en su empresa", "trabajar en su compañía", "formar parte de su equipo",
	"formar parte de su empresa", "unirme a su equipo", "oportunidad laboral", "oportunidad de empleo",
	"bolsa de trabajo", "están contratando", "contratan personal", "necesitan personal",
	"experiencia laboral", "carta de presentación", "prácticas profesionales",
}

var jobApplicationPT = []string{
	"meu currículo", "meu cv", "segue currículo", "currículo em anexo", "currículo anexo",
	"enviar currículo", "envio currículo", "envio meu currículo", "vaga de emprego", "vagas de emprego",
	"vaga de trabalho", "vaga de estágio", "candidatar à vaga", "me candidatar", "candidatura à vaga",
	"procuro emprego", "procuro trabalho", "procurando emprego", "à procura de emprego", "busco emprego",
	"oportunidade de emprego", "oportunidade de trabalho", "trabalhar na sua empresa",
	"trabalhar em sua empresa", "trabalhar na empresa de vocês", "fazer parte da equipe",
	"fazer parte da sua equipe", "estão contratando", "carta de apresentação",
}

var jobApplicationDE = []string{
	"bewerbung", "bewerbungsunterlagen", "bewerbungsschreiben", "initiativbewerbung", "bewerbe mich",
	"mich bewerben", "lebenslauf", "stellenangebot", "stellenangebote", "stellenanzeige",
	"stellenausschreibung", "offene stelle", "offene stellen", "freie stelle", "freie stellen",
	"ausbildungsplatz", "praktikumsplatz", "praktikum", "suche arbeit", "suche eine arbeit",
	"suche einen job", "suche eine stelle", "suche eine neue stelle", "arbeitsstelle", "jobangebot",
	"job bei ihnen", "arbeit bei ihnen", "stelle bei ihnen", "in ihrem team arbeiten", "teil ihres teams",
	"suchen sie mitarbeiter", "sucht ihr mitarbeiter", "minijob", "nebenjob",
}

var jobApplicationFR = []string{
	"candidature spontanée", "candidature pour le poste", "candidature au poste", "lettre de motivation",
	"mon cv", "offre d'emploi", "offres d'emploi", "recherche d'emploi", "demande d'emploi",
	"recherche un emploi", "cherche un emploi", "cherche du travail", "recherche du travail",
	"recherche un travail", "cherche un travail", "poste à pourvoir", "postes à pourvoir", "postuler",
	"je postule", "vous recrutez", "recrutez-vous", "embauchez-vous", "vous embauchez",
	"demande de stage", "stage de fin d'études", "contrat d'alternance", "rejoindre votre équipe",
	"intégrer votre équipe", "travailler dans votre entreprise", "travailler au sein de votre",
}

var jobApplicationTR = []string{
	"iş başvuru*", "özgeçmiş*", "cv'mi", "cv'im", "cvmi", "cvim", "iş arıyorum", "iş ilanı",
	"iş ilanınız*", "açık pozisyon*", "eleman arıyor musunuz", "eleman alıyor musunuz", "eleman alımı",
	"personel alımı", "iş imkanı", "firmanızda çalışmak", "şirketinizde çalışmak", "bünyenizde çalışmak",
	"ekibinize katılmak", "staj başvuru*", "staj yapmak", "stajyer",
}

// DefaultKeywords returns a copy of the built-in phrase list of
// vendor_pitch or job_application (English, Spanish, Portuguese, German,
// French and Turkish), for showing and editing; nil for other signals.
func DefaultKeywords(sig Signal) []string {
	var lists [][]string
	switch sig {
	case VendorPitch:
		lists = [][]string{vendorPitchEN, vendorPitchES, vendorPitchPT, vendorPitchDE, vendorPitchFR, vendorPitchTR}
	case JobApplication:
		lists = [][]string{jobApplicationEN, jobApplicationES, jobApplicationPT, jobApplicationDE, jobApplicationFR, jobApplicationTR}
	default:
		return nil
	}
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

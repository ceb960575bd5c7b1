package normalize

// usStates maps US state, district and territory names (as cleaned by state:
// lowercase, letters only) and their USPS codes to the lowercase 2-letter
// code Meta expects for st.
var usStates = func() map[string]string {
	m := map[string]string{
		"alabama": "al", "alaska": "ak", "arizona": "az", "arkansas": "ar", "california": "ca",
		"colorado": "co", "connecticut": "ct", "delaware": "de", "florida": "fl", "georgia": "ga",
		"hawaii": "hi", "idaho": "id", "illinois": "il", "indiana": "in", "iowa": "ia",
		"kansas": "ks", "kentucky": "ky", "louisiana": "la", "maine": "me", "maryland": "md",
		"massachusetts": "ma", "michigan": "mi", "minnesota": "mn", "mississippi": "ms", "missouri": "mo",
		"montana": "mt", "nebraska": "ne", "nevada": "nv", "newhampshire": "nh", "newjersey": "nj",
		"newmexico": "nm", "newyork": "ny", "northcarolina": "nc", "northdakota": "nd", "ohio": "oh",
		"oklahoma": "ok", "oregon": "or", "pennsylvania": "pa", "rhodeisland": "ri", "southcarolina": "sc",
		"southdakota": "sd", "tennessee": "tn", "texas": "tx", "utah": "ut", "vermont": "vt",
		"virginia": "va", "washington": "wa", "westvirginia": "wv", "wisconsin": "wi", "wyoming": "wy",

		"districtofcolumbia": "dc", "washingtondc": "dc",

		"americansamoa": "as", "guam": "gu", "northernmarianaislands": "mp", "puertorico": "pr",
		"virginislands": "vi", "usvirginislands": "vi", "unitedstatesvirginislands": "vi",
		"unitedstatesminoroutlyingislands": "um", "usminoroutlyingislands": "um",

		"armedforcesamericas": "aa", "armedforceseurope": "ae", "armedforcespacific": "ap",
	}
	codes := make([]string, 0, len(m))
	for _, code := range m {
		codes = append(codes, code)
	}
	for _, code := range codes {
		m[code] = code
	}
	return m
}()

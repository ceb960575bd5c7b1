// Package country knows the ISO 3166-1 alpha-2 country codes, their English
// names, and the IANA time zones and ISO 4217 currencies offered in forms.
//
// Code reads a lead's country as people write it: an alpha-2 code, CLDR's
// English name ("Côte d’Ivoire"), ISO 3166's short and official names
// ("Korea, Republic of", "the Plurinational State of Bolivia"), the short
// names ISO used before ("Holy See (Vatican City State)") and everyday
// forms ("South Korea", "UK", "Ivory Coast"). Names match with case,
// accents, punctuation, spacing and a "the" ignored, "&" read as "and" and
// "St" as "Saint", so "U.S.A.", "united  states" and "Cote d'Ivoire" all
// match. A code written with punctuation reads as the code ("C-A", "G@B",
// "Fr."), except across a slash ("N/A", "M/F"), and one word cut short with
// a dot reads as the one country whose name it starts ("Can.", "Switz.").
// A name that could mean two countries ("Korea", "Congo", "Virgin
// Islands", "Aus.") matches none: a wrong country would send Meta a wrong
// key, where no country sends none.
package country

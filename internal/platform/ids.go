package platform

import (
	"regexp"

	"github.com/leadsignal/leadsignal/models"
)

// idRules are the ids of where each kind's destination sends: Meta's
// dataset id, TikTok's pixel code (letters and digits) or event set id,
// Pinterest's ad account id, Google's customer id without its hyphens.
var idRules = map[models.Kind]struct {
	re   *regexp.Regexp
	want string
}{
	models.KindMeta:      {regexp.MustCompile(`^[0-9]{5,20}$`), "the dataset id: 5 to 20 digits, as Events Manager shows it"},
	models.KindTikTok:    {regexp.MustCompile(`^[A-Za-z0-9]{5,40}$`), "the pixel code or event set id: 5 to 40 letters and digits, as Events Manager shows it"},
	models.KindPinterest: {regexp.MustCompile(`^[0-9]{5,20}$`), "the ad account id: 5 to 20 digits, as Ads Manager shows it"},
	models.KindGoogle:    {regexp.MustCompile(`^[0-9]{10}$`), "the Google Ads customer id: 10 digits, like 123-456-7890"},
}

// ValidID reports whether id can be the id of where a destination of kind
// k sends (Dataset.PixelID); a Google customer id is given without its
// hyphens (GoogleAccountID).
func ValidID(k models.Kind, id string) bool {
	r, ok := idRules[k]
	return ok && r.re.MatchString(id)
}

// IDWant says what ValidID takes for kind k, for a person: "the dataset
// id: 5 to 20 digits, ...".
func IDWant(k models.Kind) string { return idRules[k].want }

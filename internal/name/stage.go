package name

import (
	"fmt"
	"strings"

	"github.com/leadsignal/leadsignal/models"
)

// StageProblem says what is wrong with s as a CRM stage's name, or ""
// when it can be one: a name (Problem) that is not one of the junk
// markers, which are a person's verdict on the lead page.
func StageProblem(s string) string {
	switch {
	case s == "":
		return "required: the CRM stage, like qualified or won"
	case strings.EqualFold(s, models.StageJunk) || strings.EqualFold(s, models.StageNotJunk):
		return fmt.Sprintf("%s is a person's verdict, set on the lead page; it is not a CRM stage", s)
	}
	return Problem(s)
}

package web

import "github.com/labstack/echo/v4"

// ruleRoutes adds the Rules pages (editors and owners) to g.
func (h *Handler) ruleRoutes(g *echo.Group) {}

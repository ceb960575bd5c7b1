package web

import (
	"log/slog"
	"time"

	"github.com/labstack/echo/v4"
)

// accessLog writes one line per request.
func (h *Handler) accessLog(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			// Let the error handler write the response now, so the line
			// below logs the status the client really got.
			c.Error(err)
		}
		req := c.Request()
		h.log.Info("request",
			slog.String("method", req.Method),
			slog.String("path", logPath(req.URL.Path)),
			slog.Int("status", c.Response().Status),
			slog.Int64("bytes", c.Response().Size),
			slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
			slog.String("ip", c.RealIP()),
		)
		return nil
	}
}

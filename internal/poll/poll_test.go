package poll

import (
	"errors"
	"testing"
	"time"
)

func TestUntilAsksAgainUntilTheConditionHolds(t *testing.T) {
	calls := 0
	Until(t, 10*time.Second, func() error {
		if calls++; calls < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if calls != 3 {
		t.Errorf("check called %d times; want 3: until it held, and not after", calls)
	}
}

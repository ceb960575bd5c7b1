package benchkit

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// CPUTime is the user and system CPU time this process has used.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ProcStatusKB reads a "kB" field of /proc/self/status (VmHWM, VmRSS).
func ProcStatusKB(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			v, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return v
		}
	}
	return 0
}

// ResetPeakRSS makes VmHWM start again from the current RSS (Linux 4.0+),
// so a peak read later is the measured part's own.
func ResetPeakRSS() {
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// PostgresPID is the pid of the Postgres that serves dbURL when it runs on
// this machine and its files are readable, else 0.
func PostgresPID(ctx context.Context, dbURL string) int {
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return 0
	}
	defer db.Close()
	var dir string
	if err := db.QueryRowContext(ctx, "SHOW data_directory").Scan(&dir); err != nil {
		return 0
	}
	b, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil {
		return 0
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d/stat", pid)); err != nil {
		return 0
	}
	return pid
}

// PostgresCPU is the CPU time a local Postgres cluster has used so far:
// its postmaster, the backends it has reaped (closed connections) and the
// live ones; false when pid is 0.
func PostgresCPU(pid int) (time.Duration, bool) {
	if pid == 0 {
		return 0, false
	}
	// ticks sums the first n of utime, stime, cutime, cstime: fields 14 to
	// 17 of /proc/PID/stat, the 12th to 15th after "(comm)".
	ticks := func(p, n int) int64 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			return 0
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			return 0
		}
		f := strings.Fields(s[i+1:])
		var sum int64
		for k := 11; k < 11+n && k < len(f); k++ {
			v, _ := strconv.ParseInt(f[k], 10, 64)
			sum += v
		}
		return sum
	}
	total := ticks(pid, 4)
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, c := range strings.Fields(string(b)) {
			if cp, err := strconv.Atoi(c); err == nil {
				total += ticks(cp, 2)
			}
		}
	}
	return time.Duration(total) * (time.Second / 100), true // USER_HZ is 100 on Linux
}

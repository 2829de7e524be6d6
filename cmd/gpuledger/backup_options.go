package main

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// backupOptionsFromEnv reads GPULEDGER_BACKUP_KEEP and GPULEDGER_BACKUP_AT
// for the directory dir (GPULEDGER_BACKUP_DIR, already parsed) and zone tz
// (GPULEDGER_TZ; empty means local), for sqlite.StartNightly. Errors name
// the variable.
func backupOptionsFromEnv(dir, tz string, getenv func(string) string) (sqlite.NightlyOptions, error) {
	o := sqlite.NightlyOptions{Dir: dir, Keep: sqlite.DefaultBackupKeep, At: envOr(getenv, "GPULEDGER_BACKUP_AT", sqlite.DefaultBackupAt), Loc: time.Local}
	var errs []error
	if v := getenv("GPULEDGER_BACKUP_KEEP"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 3650 {
			errs = append(errs, fmt.Errorf("GPULEDGER_BACKUP_KEEP: %q is not a number of backups from 1 to 3650 (e.g. 7)", v))
		}
		o.Keep = n
	}
	if _, _, err := sqlite.ParseTimeOfDay(o.At); err != nil {
		errs = append(errs, fmt.Errorf("GPULEDGER_BACKUP_AT: %w", err))
	}
	if tz != "" {
		loc, err := time.LoadLocation(tz)
		if err != nil {
			errs = append(errs, fmt.Errorf("GPULEDGER_TZ: unknown time zone %q", tz))
		} else {
			o.Loc = loc
		}
	}
	return o, errors.Join(errs...)
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
	"github.com/gpuledger/gpuledger/view"
)

// runExport prints one user's ledger, or with --team a team's, with
// computed charges (DESIGN.md section 5). It only reads, so it is safe while the server runs and
// works when the database's disk is full.
func runExport(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	db := envOr(getenv, "GPULEDGER_DB", "gpuledger.db")
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&db, "db", db, "SQLite database file (GPULEDGER_DB)")
	format := fs.String("format", "json", "output format: json or csv")
	asOfText := fs.String("as-of", "", "compute charges as of TIME (RFC 3339, or 2006-01-02 15:04 in the user's zone); default now")
	userText := fs.String("user", "", "the user (Telegram ID) to export; may be left out when the database has one user")
	teamName := fs.String("team", "", "export the ledger of the team named NAME instead of a user's")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: gpuledger export [--format json|csv] [--as-of TIME] [--user ID | --team NAME] [--db FILE]\n\nPrint one user's or one team's ledger with computed charges. Flags:\n")
		fs.PrintDefaults()
	}
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErrorf("unexpected argument %q: export takes only flags (--format, --as-of, --user, --team, --db)", rest[0])
	}
	if *userText != "" && *teamName != "" {
		return usageErrorf("--user and --team both given: export one ledger, a user's or a team's")
	}
	if *format != "json" && *format != "csv" {
		return fmt.Errorf("--format %q: use json or csv", *format)
	}
	store, err := openExisting(ctx, db)
	if err != nil {
		return err
	}
	defer store.Close()

	var user ledger.User
	var opts []ledger.ExportOption
	if *teamName != "" {
		var team ledger.ExportTeam
		user, team, err = pickTeam(ctx, store, *teamName)
		opts = append(opts, ledger.WithTeam(team))
	} else {
		user, err = pickUser(ctx, store, *userText)
	}
	if err != nil {
		return err
	}
	book, err := store.Book(ctx, user.ID)
	if err != nil {
		return fmt.Errorf("load ledger of user %d: %w", user.ID, err)
	}
	asOf := time.Now()
	if *asOfText != "" {
		asOf, err = parseAsOf(*asOfText, user.Location())
		if err != nil {
			return err
		}
	}
	if *format == "csv" {
		return ledger.WriteExportCSV(stdout, book, asOf, opts...)
	}
	// Each rental's bench and job runs, which the book leaves out.
	if err := ledger.LoadDelivered(ctx, book, &store.Benchmarks); err != nil {
		return fmt.Errorf("load ledger of user %d: %w", user.ID, err)
	}
	return ledger.WriteExportJSON(stdout, book, asOf, opts...)
}

// pickTeam returns the ledger of the team named name (case-insensitive)
// and what its export says of the team; an unknown name is an error that
// lists the teams there are.
func pickTeam(ctx context.Context, store *sqlite.DB, name string) (ledger.User, ledger.ExportTeam, error) {
	ts, ok := any(store).(ledger.TeamStore)
	if !ok {
		return ledger.User{}, ledger.ExportTeam{}, fmt.Errorf("--team %q: this database keeps no teams", name)
	}
	t, err := ts.TeamByName(ctx, name)
	if ledger.ErrorCode(err) == ledger.ENOTFOUND {
		all, lerr := ts.Teams(ctx)
		if lerr != nil {
			return ledger.User{}, ledger.ExportTeam{}, lerr
		}
		if len(all) == 0 {
			return ledger.User{}, ledger.ExportTeam{}, fmt.Errorf("--team %q: the database has no teams", name)
		}
		names := make([]string, 0, len(all))
		for _, t := range all {
			names = append(names, t.Name)
		}
		return ledger.User{}, ledger.ExportTeam{}, fmt.Errorf("--team %q: no such team (the teams: %s)", name, strings.Join(names, ", "))
	}
	if err != nil {
		return ledger.User{}, ledger.ExportTeam{}, fmt.Errorf("--team %q: %w", name, err)
	}
	members, err := ts.Members(ctx, t.ID)
	if err != nil {
		return ledger.User{}, ledger.ExportTeam{}, fmt.Errorf("--team %q: members: %w", name, err)
	}
	// Former members are named with their last username and role, so a
	// record of someone who left or was removed still says whose it was.
	former, err := ts.FormerMembers(ctx, t.ID)
	if err != nil {
		return ledger.User{}, ledger.ExportTeam{}, fmt.Errorf("--team %q: former members: %w", name, err)
	}
	u, err := store.User(ctx, t.Ledger())
	if err != nil {
		return ledger.User{}, ledger.ExportTeam{}, fmt.Errorf("--team %q: its ledger: %w", name, err)
	}
	return u, ledger.ExportTeam{Team: t, Members: members, Former: former}, nil
}

// runBackup writes a consistent copy of the live database to FILE,
// created owner-only (0600) and checked as the nightly backups are
// (sqlite.VerifyBackup). It only reads the database, so it works
// while the server runs and when the database's disk is full (the copy
// going to another disk).
func runBackup(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	db := envOr(getenv, "GPULEDGER_DB", "gpuledger.db")
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&db, "db", db, "SQLite database file (GPULEDGER_DB)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: gpuledger backup FILE [--db FILE]\n\nWrite a consistent copy of the database to FILE, which must not exist. Flags:\n")
		fs.PrintDefaults()
	}
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageErrorf("name one backup file, e.g. gpuledger backup /backups/ledger.db (got %d arguments)", len(rest))
	}
	dst := rest[0]
	if _, err := os.Stat(dst); err == nil {
		return fmt.Errorf("%s already exists: choose a new file name (a backup never overwrites)", dst)
	}
	store, err := openExisting(ctx, db)
	if err != nil {
		return err
	}
	defer store.Close()
	if err := store.Backup(ctx, dst); err != nil {
		return err
	}
	if err := sqlite.VerifyBackup(ctx, dst); err != nil {
		os.Remove(dst) // never leave a damaged copy named as the user asked
		return err
	}
	fmt.Fprintf(stdout, "backup written to %s\n", dst)
	return nil
}

// openExisting opens a database that must already exist, read-only:
// export and backup never create an empty one by mistake, never migrate
// or write it, and so work on a full disk, when taking the data off is
// what the user needs (sqlite.OpenReadOnly).
func openExisting(ctx context.Context, path string) (*sqlite.DB, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("database %s does not exist (set GPULEDGER_DB or --db)", path)
	} else if err != nil {
		return nil, err
	}
	return sqlite.OpenReadOnly(ctx, path)
}

func pickUser(ctx context.Context, store *sqlite.DB, text string) (ledger.User, error) {
	if text != "" {
		id, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return ledger.User{}, fmt.Errorf("--user %q is not a user ID (a number)", text)
		}
		if ledger.IsTeamLedger(id) {
			return ledger.User{}, fmt.Errorf("--user %d is a team's ledger: export it with --team NAME", id)
		}
		u, err := store.User(ctx, id)
		if err != nil {
			return ledger.User{}, fmt.Errorf("--user %d: %s", id, view.LedgerMessage(err, chat.LangEN, time.UTC, time.Time{}))
		}
		return u, nil
	}
	all, err := store.Users(ctx)
	if err != nil {
		return ledger.User{}, err
	}
	// A team's ledger is kept as a user; it is exported with --team.
	users := make([]ledger.User, 0, len(all))
	for _, u := range all {
		if !ledger.IsTeamLedger(u.ID) {
			users = append(users, u)
		}
	}
	switch len(users) {
	case 0:
		return ledger.User{}, errors.New("the database has no users yet")
	case 1:
		return users[0], nil
	}
	ids := make([]string, 0, len(users))
	for _, u := range users {
		ids = append(ids, strconv.FormatInt(u.ID, 10))
	}
	return ledger.User{}, fmt.Errorf("the database has %d users: choose one with --user ID (%s)", len(users), strings.Join(ids, ", "))
}

// parseAsOf accepts RFC 3339, or a date with optional time in loc.
func parseAsOf(s string, loc *time.Location) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--as-of %q is not a time: use RFC 3339 (2026-11-02T00:00:00+08:00) or 2026-11-02 00:00", s)
}

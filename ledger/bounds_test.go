package ledger

import (
	"errors"
	"testing"
	"time"
)

// validRental is a rental whose terms pass Validate, for tests to vary.
func validRental() Rental {
	return Rental{Name: "box1", Platform: "autodl", GPUCount: 1, Mode: PerSecond, Currency: "CNY"}
}

// TestRental_TermBounds: a rental's count, min=, step= and for= lie
// within the ledger's named bounds (0 stored for "not given"), and each
// refusal carries its own key with the value and both bounds.
func TestRental_TermBounds(t *testing.T) {
	const day = 24 * time.Hour
	for _, tt := range []struct {
		name   string
		set    func(*Rental)
		ok     bool
		key    string
		lo, hi any
	}{
		{"count 0", func(r *Rental) { r.GPUCount = 0 }, false, "bad_count", MinGPUCount, MaxGPUCount},
		{"count 1", func(r *Rental) { r.GPUCount = 1 }, true, "", nil, nil},
		{"count 64", func(r *Rental) { r.GPUCount = 64 }, true, "", nil, nil},
		{"count 65", func(r *Rental) { r.GPUCount = 65 }, false, "bad_count", MinGPUCount, MaxGPUCount},
		{"min unset", func(r *Rental) { r.Min = 0 }, true, "", nil, nil},
		{"min 1s", func(r *Rental) { r.Min = time.Second }, true, "", nil, nil},
		{"min 31d", func(r *Rental) { r.Min = 31 * day }, true, "", nil, nil},
		{"min 31d1s", func(r *Rental) { r.Min = 31*day + time.Second }, false, "bad_min", MinBillingTerm, MaxBillingTerm},
		{"min 0.5s", func(r *Rental) { r.Min = 500 * time.Millisecond }, false, "bad_min", MinBillingTerm, MaxBillingTerm},
		{"min 1.5s", func(r *Rental) { r.Min = 1500 * time.Millisecond }, false, "bad_min", MinBillingTerm, MaxBillingTerm},
		{"min -1s", func(r *Rental) { r.Min = -time.Second }, false, "bad_min", MinBillingTerm, MaxBillingTerm},
		{"step 1s", func(r *Rental) { r.Step = time.Second }, true, "", nil, nil},
		{"step 31d", func(r *Rental) { r.Step = 31 * day }, true, "", nil, nil},
		{"step 31d1s", func(r *Rental) { r.Step = 31*day + time.Second }, false, "bad_step", MinBillingTerm, MaxBillingTerm},
		{"step 0.5s", func(r *Rental) { r.Step = 500 * time.Millisecond }, false, "bad_step", MinBillingTerm, MaxBillingTerm},
		{"lease unset", func(r *Rental) { r.Lease = 0 }, true, "", nil, nil},
		{"lease 30s", func(r *Rental) { r.Lease = 30 * time.Second }, false, "bad_lease", MinLease, MaxLease},
		{"lease 1m", func(r *Rental) { r.Lease = time.Minute }, true, "", nil, nil},
		{"lease 366d", func(r *Rental) { r.Lease = 366 * day }, true, "", nil, nil},
		{"lease 366d1s", func(r *Rental) { r.Lease = 366*day + time.Second }, false, "bad_lease", MinLease, MaxLease},
		{"lease -1m", func(r *Rental) { r.Lease = -time.Minute }, false, "bad_lease", MinLease, MaxLease},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := validRental()
			tt.set(&r)
			err := r.Validate()
			if tt.ok {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var le *Error
			if !errors.As(err, &le) || le.Code != EINVALID {
				t.Fatalf("Validate() = %v, want EINVALID %s", err, tt.key)
			}
			if le.Key != tt.key || len(le.Args) != 3 || le.Args[1] != tt.lo || le.Args[2] != tt.hi {
				t.Errorf("Validate() = %s %v, want %s naming %v and %v", le.Key, le.Args, tt.key, tt.lo, tt.hi)
			}
		})
	}
}

// TestSettings_DurationBounds: chat's settings lie within the named
// bounds (0 is the default); the store also keeps shorter positive values
// for tests and demos, never longer ones; refusals name both bounds.
func TestSettings_DurationBounds(t *testing.T) {
	const day = 24 * time.Hour
	for _, tt := range []struct {
		name           string
		v              time.Duration
		chat, stored   bool
		wantLo, wantHi time.Duration
		field          func(*Settings) *time.Duration
	}{
		{"idle_warn", 0, true, true, MinIdleWarn, MaxIdleWarn, func(s *Settings) *time.Duration { return &s.IdleWarn }},
		{"idle_warn", 30 * time.Second, false, true, MinIdleWarn, MaxIdleWarn, func(s *Settings) *time.Duration { return &s.IdleWarn }},
		{"idle_warn", time.Minute, true, true, MinIdleWarn, MaxIdleWarn, func(s *Settings) *time.Duration { return &s.IdleWarn }},
		{"idle_warn", 7 * day, true, true, MinIdleWarn, MaxIdleWarn, func(s *Settings) *time.Duration { return &s.IdleWarn }},
		{"idle_warn", 8 * day, false, false, MinIdleWarn, MaxIdleWarn, func(s *Settings) *time.Duration { return &s.IdleWarn }},
		{"silent", time.Minute, true, true, MinSilent, MaxSilent, func(s *Settings) *time.Duration { return &s.Silent }},
		{"silent", day, true, true, MinSilent, MaxSilent, func(s *Settings) *time.Duration { return &s.Silent }},
		{"silent", 2 * day, false, false, MinSilent, MaxSilent, func(s *Settings) *time.Duration { return &s.Silent }},
		{"long_run", 30 * time.Minute, false, true, MinLongRun, MaxLongRun, func(s *Settings) *time.Duration { return &s.LongRun }},
		{"long_run", time.Hour, true, true, MinLongRun, MaxLongRun, func(s *Settings) *time.Duration { return &s.LongRun }},
		{"long_run", 30 * day, true, true, MinLongRun, MaxLongRun, func(s *Settings) *time.Duration { return &s.LongRun }},
		{"long_run", 31 * day, false, false, MinLongRun, MaxLongRun, func(s *Settings) *time.Duration { return &s.LongRun }},
		{"long_run", -time.Hour, false, false, MinLongRun, MaxLongRun, func(s *Settings) *time.Duration { return &s.LongRun }},
	} {
		s := DefaultSettings()
		*tt.field(&s) = tt.v
		for _, c := range []struct {
			what string
			err  error
			want bool
		}{{"Validate", s.Validate(), tt.chat}, {"ValidateStored", s.ValidateStored(), tt.stored}} {
			if (c.err == nil) != c.want {
				t.Errorf("%s=%v: %s() = %v, want ok %v", tt.name, tt.v, c.what, c.err, c.want)
				continue
			}
			var le *Error
			if c.err != nil && (!errors.As(c.err, &le) || le.Key != "setting_range" || len(le.Args) != 4 ||
				le.Args[0] != tt.name || le.Args[2] != tt.wantLo || le.Args[3] != tt.wantHi) {
				t.Errorf("%s=%v: %s() = %v, want setting_range naming %v and %v", tt.name, tt.v, c.what, c.err, tt.wantLo, tt.wantHi)
			}
		}
		lo, hi, ok := SettingBounds(tt.name)
		if !ok || lo != tt.wantLo || hi != tt.wantHi {
			t.Errorf("SettingBounds(%q) = %v, %v, %v; want %v, %v", tt.name, lo, hi, ok, tt.wantLo, tt.wantHi)
		}
	}
	if _, _, ok := SettingBounds("summary"); ok {
		t.Error(`SettingBounds("summary") is ok; it is no duration setting`)
	}
}

// TestProfiles_WithinTermBounds: every platform profile's defaults make a
// rental that Validate accepts, so applying a profile never produces
// terms a user could not have written.
func TestProfiles_WithinTermBounds(t *testing.T) {
	if len(Profiles()) == 0 {
		t.Fatal("no profiles")
	}
	for _, p := range Profiles() {
		r := validRental()
		r.Platform, r.Currency, r.Mode = "", "", ""
		p.Apply(&r)
		if err := r.Validate(); err != nil {
			t.Errorf("profile %s: %v", p.Key, err)
		}
	}
}

package sqlite_test

import (
	"context"
	"testing"
)

// TestOpen_Migration016 builds a database at schema 15 with listed
// instances of two platforms, and checks that 016 starts each platform's
// generation at 1 and that the next change moves it.
func TestOpen_Migration016(t *testing.T) {
	ctx := context.Background()
	path := dbAtSchema(t, 15,
		`INSERT INTO users (id, lang, tz, summary_at, idle_warn_ns, silent_ns, quiet_from, quiet_to, long_run_ns, created_at)
			VALUES (7, 'en', '', 1320, 1800000000000, 600000000000, -1, -1, 43200000000000, 1790000000)`,
		`INSERT INTO platform_instances (user_id, platform, platform_id, status, first_seen, last_seen) VALUES (7, 'runpod', 'p1', 'asked', 1790000000, 1790000000)`,
		`INSERT INTO platform_instances (user_id, platform, platform_id, status, first_seen, last_seen) VALUES (7, 'runpod', 'p2', 'declined', 1790000000, 1790000000)`,
		`INSERT INTO platform_instances (user_id, platform, platform_id, status, first_seen, last_seen) VALUES (7, 'vast', '42', 'asked', 1790000000, 1790000000)`,
	)

	db := openPath(t, path)
	for _, p := range []string{"runpod", "vast"} {
		if g, err := db.PlatformGeneration(ctx, 7, p); err != nil || g != 1 {
			t.Fatalf("%s generation after 016 = %d, %v; want 1", p, g, err)
		}
	}
	ins, gen, err := db.PlatformInstancesGen(ctx, 7, "runpod")
	if err != nil || len(ins) != 2 || gen != 1 {
		t.Fatalf("PlatformInstancesGen = %d rows at %d, %v; want 2 at 1", len(ins), gen, err)
	}
	ins[0].Name = "renamed"
	if _, err := db.SavePlatformInstance(ctx, ins[0]); err != nil {
		t.Fatal(err)
	}
	if g, _ := db.PlatformGeneration(ctx, 7, "runpod"); g == 1 {
		t.Fatal("a change after 016 left the generation at 1")
	}
	if g, _ := db.PlatformGeneration(ctx, 7, "vast"); g != 1 {
		t.Fatalf("a RunPod change moved Vast.ai's generation to %d", g)
	}
}

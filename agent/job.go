package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/internal/clip"
)

// Job is the command the agent wraps (run ... -- COMMAND). While it lives the
// host is busy and never released. It is safe for concurrent use.
type Job struct {
	mu    sync.Mutex
	state wire.JobState
	start time.Time // monotonic
	done  chan struct{}
}

// jobStopGrace is how long a job gets between SIGTERM and SIGKILL when the
// agent stops.
const jobStopGrace = 10 * time.Second

// StartJob starts args[0] with args[1:], its output going to stdout and
// stderr. When ctx ends the job gets SIGTERM, then SIGKILL after a grace
// period. A command that cannot start gives a Job that has already exited
// with Error set, and the error.
func StartJob(ctx context.Context, args []string, stdout, stderr io.Writer) (*Job, error) {
	j := &Job{done: make(chan struct{}), start: time.Now()}
	j.state = wire.JobState{Command: clip.Bytes(strings.Join(args, " "), wire.MaxStrLen, ""), StartedAt: j.start.Round(0)}
	if len(args) == 0 {
		j.finish(nil, errors.New("agent: empty job command"))
		return j, errors.New("agent: empty job command")
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = jobStopGrace
	if err := cmd.Start(); err != nil {
		err = fmt.Errorf("agent: start job: %w", err)
		j.finish(nil, err)
		return j, err
	}
	j.mu.Lock()
	j.state.Running, j.state.PID = true, cmd.Process.Pid
	j.mu.Unlock()
	go func() {
		err := cmd.Wait()
		code := cmd.ProcessState.ExitCode() // -1 when killed by a signal
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			j.finish(&code, err)
			return
		}
		j.finish(&code, nil)
	}()
	return j, nil
}

func (j *Job) finish(code *int, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	end := time.Now()
	j.state.Running, j.state.Exited, j.state.ExitCode = false, true, code
	e := end.Round(0)
	j.state.EndedAt = &e
	j.state.DurationSeconds = end.Sub(j.start).Seconds()
	if err != nil {
		j.state.Error = clip.Bytes(err.Error(), wire.MaxStrLen, "")
	}
	close(j.done)
}

// State returns the job's state now.
func (j *Job) State() wire.JobState {
	j.mu.Lock()
	defer j.mu.Unlock()
	st := j.state
	if st.Running {
		st.DurationSeconds = time.Since(j.start).Seconds()
	}
	return st
}

// Alive reports whether the job is running.
func (j *Job) Alive() bool {
	if j == nil {
		return false
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.state.Running
}

// setLabel names the job (run --label) in every later State.
func (j *Job) setLabel(label string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.state.Label = label
}

// Done is closed when the job has exited (or failed to start).
func (j *Job) Done() <-chan struct{} { return j.done }

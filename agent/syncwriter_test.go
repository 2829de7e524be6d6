package agent

import (
	"io"
	"strings"
	"sync"
)

// syncWriter serialises writes to w, for logs written from several
// goroutines and read by the test.
type syncWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}

var _ io.Writer = (*syncWriter)(nil)

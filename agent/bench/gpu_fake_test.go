package bench

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/gpuledger/gpuledger/perf"
)

// fakeDriver is a CUDA driver with a model of time: each stream has a
// clock (ms) that launches and copies advance, events read it. A kernel's
// launch takes msPerIter[entry]·iters (plus launchMs), a copy bytes over
// its rate. Any call can be made to fail, a module refused, a
// synchronisation hang.
type fakeDriver struct {
	mu sync.Mutex

	devices []fakeDevice
	version int

	initErr   error
	countErr  error
	ctxErr    error
	msPerIter map[string]float64 // by entry
	launchMs  float64
	// bytes per ms of each copy kind: "dtod" counts bytes copied once.
	rate map[string]float64
	// refuse returns the error and JIT log for a module, or nil to load it.
	refuse func(ptx []byte) (error, string)
	// allocLimit fails device allocations above it (out of memory);
	// hostLimit host ones.
	allocLimit, hostLimit uint64
	free                  uint64
	// hangAfter makes the n-th EventSynchronize block until release is
	// closed (0: never).
	hangAfter int
	release   chan struct{}

	clock     float64
	events    map[uintptr]float64
	next      uintptr
	syncs     int
	mods      map[uintptr]string // module → entry it holds
	fns       map[uintptr]string
	live      map[uintptr]string // allocations not freed
	launches  []fakeLaunch
	unloaded  int
	destroyed int
}

type fakeDevice struct {
	name     string
	uuid     string
	cc       int // major*10+minor
	sms      int
	occupant int // blocks of 256 per SM
}

type fakeLaunch struct {
	entry       string
	grid, block int
	iters       uint64
}

func newFakeDriver(devs ...fakeDevice) *fakeDriver {
	return &fakeDriver{
		devices:   devs,
		version:   12040,
		msPerIter: map[string]float64{},
		rate:      map[string]float64{},
		free:      80 << 30,
		events:    map[uintptr]float64{},
		mods:      map[uintptr]string{},
		fns:       map[uintptr]string{},
		live:      map[uintptr]string{},
		release:   make(chan struct{}),
	}
}

func (f *fakeDriver) handle() uintptr { f.next += 16; return f.next }

func (f *fakeDriver) Init() error           { return f.initErr }
func (f *fakeDriver) Version() (int, error) { return f.version, nil }
func (f *fakeDriver) DeviceCount() (int, error) {
	return len(f.devices), f.countErr
}
func (f *fakeDriver) dev(i int) (fakeDevice, error) {
	if i < 0 || i >= len(f.devices) {
		return fakeDevice{}, &cuError{Call: "cuDeviceGet", Code: 101}
	}
	return f.devices[i], nil
}
func (f *fakeDriver) DeviceName(i int) (string, error) {
	d, err := f.dev(i)
	return d.name, err
}
func (f *fakeDriver) DeviceUUID(i int) string {
	d, _ := f.dev(i)
	return d.uuid
}
func (f *fakeDriver) Attribute(attr, i int) (int, error) {
	d, err := f.dev(i)
	if err != nil {
		return 0, err
	}
	switch attr {
	case attrComputeMajor:
		return d.cc / 10, nil
	case attrComputeMinor:
		return d.cc % 10, nil
	case attrMultiprocessorCount:
		return d.sms, nil
	}
	return 0, &cuError{Call: "cuDeviceGetAttribute", Code: 1}
}
func (f *fakeDriver) CtxCreate(int) (uintptr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ctxErr != nil {
		return 0, f.ctxErr
	}
	return f.handle(), nil
}
func (f *fakeDriver) CtxDestroy(uintptr) {
	f.mu.Lock()
	f.destroyed++
	f.mu.Unlock()
}
func (f *fakeDriver) CtxSynchronize() error { return nil }
func (f *fakeDriver) MemInfo() (uint64, uint64, error) {
	return f.free, 80 << 30, nil
}
func (f *fakeDriver) ModuleLoad(ptx []byte) (uintptr, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refuse != nil {
		if err, log := f.refuse(ptx); err != nil {
			return 0, log, err
		}
	}
	i := bytes.Index(ptx, []byte(".entry "))
	j := bytes.IndexByte(ptx[i:], '(')
	h := f.handle()
	f.mods[h] = string(ptx[i+len(".entry ") : i+j])
	return h, "", nil
}
func (f *fakeDriver) ModuleUnload(uintptr) {
	f.mu.Lock()
	f.unloaded++
	f.mu.Unlock()
}
func (f *fakeDriver) Function(mod uintptr, name string) (uintptr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mods[mod] != name {
		return 0, &cuError{Call: "cuModuleGetFunction " + name, Code: 500, Text: "named symbol not found"}
	}
	h := f.handle()
	f.fns[h] = name
	return h, nil
}
func (f *fakeDriver) Occupancy(uintptr, int) (int, error) {
	return f.devices[0].occupant, nil
}
func (f *fakeDriver) Launch(fn uintptr, grid, block int, _ uintptr, params ...uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.fns[fn]
	if len(params) != 2 {
		return fmt.Errorf("fake: %d params", len(params))
	}
	f.launches = append(f.launches, fakeLaunch{e, grid, block, params[1]})
	f.clock += f.launchMs + f.msPerIter[e]*float64(params[1])
	return nil
}
func (f *fakeDriver) alloc(kind string, n, limit uint64) (uintptr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if limit > 0 && n > limit {
		return 0, &cuError{Call: "cuMemAlloc", Code: cuErrOutOfMemory, Text: "out of memory"}
	}
	h := f.handle()
	f.live[h] = kind
	return h, nil
}
func (f *fakeDriver) MemAlloc(n uint64) (uintptr, error) { return f.alloc("dev", n, f.allocLimit) }
func (f *fakeDriver) MemHostAlloc(n uint64) (uintptr, error) {
	return f.alloc("host", n, f.hostLimit)
}
func (f *fakeDriver) freeIt(p uintptr) {
	f.mu.Lock()
	delete(f.live, p)
	f.mu.Unlock()
}
func (f *fakeDriver) MemFree(p uintptr)     { f.freeIt(p) }
func (f *fakeDriver) MemFreeHost(p uintptr) { f.freeIt(p) }
func (f *fakeDriver) copyOf(kind string, n uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.rate[kind]
	if r <= 0 {
		return &cuError{Call: "cuMemcpy", Code: 1, Text: "no rate"}
	}
	f.clock += float64(n) / r
	return nil
}
func (f *fakeDriver) CopyHtoD(_, _ uintptr, n uint64, _ uintptr) error { return f.copyOf("htod", n) }
func (f *fakeDriver) CopyDtoH(_, _ uintptr, n uint64, _ uintptr) error { return f.copyOf("dtoh", n) }
func (f *fakeDriver) CopyDtoD(_, _ uintptr, n uint64, _ uintptr) error { return f.copyOf("dtod", n) }
func (f *fakeDriver) StreamCreate() (uintptr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.handle(), nil
}
func (f *fakeDriver) StreamDestroy(uintptr) {}
func (f *fakeDriver) EventCreate() (uintptr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.handle(), nil
}
func (f *fakeDriver) EventRecord(e, _ uintptr) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events[e] = f.clock
	return nil
}
func (f *fakeDriver) EventSynchronize(uintptr) error {
	f.mu.Lock()
	f.syncs++
	hang := f.hangAfter > 0 && f.syncs >= f.hangAfter
	f.mu.Unlock()
	if hang {
		<-f.release
		return &cuError{Call: "cuEventSynchronize", Code: cuErrLaunchTimeout, Text: "the launch timed out"}
	}
	return nil
}
func (f *fakeDriver) EventElapsed(a, b uintptr) (float32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return float32(f.events[b] - f.events[a]), nil
}
func (f *fakeDriver) EventDestroy(uintptr) {}

// fakeFacts is NVML as a table.
type fakeFacts struct {
	drv, cuda string
	gpus      []perf.GPU
	sample    nvSample
	closed    bool
}

func (f *fakeFacts) Versions() (string, string) { return f.drv, f.cuda }
func (f *fakeFacts) Count() int                 { return len(f.gpus) }
func (f *fakeFacts) Static(i int, g *perf.GPU) {
	idx := g.Index
	*g = f.gpus[i]
	g.Index = idx
}
func (f *fakeFacts) Sample(int) nvSample { return f.sample }
func (f *fakeFacts) Close()              { f.closed = true }

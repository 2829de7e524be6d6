//go:build cgo && linux

package bench

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// The driver API's types, declared here instead of taken from cuda.h: the
// build needs no CUDA headers or toolkit. Only pointer-sized handles, ints
// and CUdeviceptr (unsigned long long) cross the boundary.
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void *CUhandle;

static void *gl_lib;
static CUresult (*p_cuInit)(unsigned int);
static CUresult (*p_cuDriverGetVersion)(int *);
static CUresult (*p_cuDeviceGetCount)(int *);
static CUresult (*p_cuDeviceGet)(CUdevice *, int);
static CUresult (*p_cuDeviceGetName)(char *, int, CUdevice);
static CUresult (*p_cuDeviceGetUuid)(unsigned char *, CUdevice);
static CUresult (*p_cuDeviceGetAttribute)(int *, int, CUdevice);
static CUresult (*p_cuCtxCreate)(CUhandle *, unsigned int, CUdevice);
static CUresult (*p_cuCtxDestroy)(CUhandle);
static CUresult (*p_cuCtxSynchronize)(void);
static CUresult (*p_cuMemGetInfo)(size_t *, size_t *);
static CUresult (*p_cuModuleLoadDataEx)(CUhandle *, const void *, unsigned int, int *, void **);
static CUresult (*p_cuModuleUnload)(CUhandle);
static CUresult (*p_cuModuleGetFunction)(CUhandle *, CUhandle, const char *);
static CUresult (*p_cuOccupancy)(int *, CUhandle, int, size_t);
static CUresult (*p_cuLaunchKernel)(CUhandle, unsigned int, unsigned int, unsigned int,
	unsigned int, unsigned int, unsigned int, unsigned int, CUhandle, void **, void **);
static CUresult (*p_cuMemAlloc)(CUdeviceptr *, size_t);
static CUresult (*p_cuMemFree)(CUdeviceptr);
static CUresult (*p_cuMemHostAlloc)(void **, size_t, unsigned int);
static CUresult (*p_cuMemFreeHost)(void *);
static CUresult (*p_cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUhandle);
static CUresult (*p_cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUhandle);
static CUresult (*p_cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUhandle);
static CUresult (*p_cuStreamCreate)(CUhandle *, unsigned int);
static CUresult (*p_cuStreamDestroy)(CUhandle);
static CUresult (*p_cuEventCreate)(CUhandle *, unsigned int);
static CUresult (*p_cuEventRecord)(CUhandle, CUhandle);
static CUresult (*p_cuEventSynchronize)(CUhandle);
static CUresult (*p_cuEventElapsedTime)(float *, CUhandle, CUhandle);
static CUresult (*p_cuEventDestroy)(CUhandle);
static CUresult (*p_cuGetErrorString)(CUresult, const char **);

#define GL_SYM(p, name) do { *(void **)(&p) = dlsym(gl_lib, name); if (!p) return name; } while (0)

// gl_open loads libcuda.so.1 and every entry point the bench needs. It
// returns NULL, or the name of what is missing (the library itself: NULL
// and *dlerr set).
static const char *gl_open(const char **dlerr) {
	if (gl_lib) return NULL;
	gl_lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!gl_lib) {
		*dlerr = dlerror();
		return "libcuda.so.1";
	}
	GL_SYM(p_cuInit, "cuInit");
	GL_SYM(p_cuDriverGetVersion, "cuDriverGetVersion");
	GL_SYM(p_cuDeviceGetCount, "cuDeviceGetCount");
	GL_SYM(p_cuDeviceGet, "cuDeviceGet");
	GL_SYM(p_cuDeviceGetName, "cuDeviceGetName");
	GL_SYM(p_cuDeviceGetAttribute, "cuDeviceGetAttribute");
	GL_SYM(p_cuCtxCreate, "cuCtxCreate_v2");
	GL_SYM(p_cuCtxDestroy, "cuCtxDestroy_v2");
	GL_SYM(p_cuCtxSynchronize, "cuCtxSynchronize");
	GL_SYM(p_cuMemGetInfo, "cuMemGetInfo_v2");
	GL_SYM(p_cuModuleLoadDataEx, "cuModuleLoadDataEx");
	GL_SYM(p_cuModuleUnload, "cuModuleUnload");
	GL_SYM(p_cuModuleGetFunction, "cuModuleGetFunction");
	GL_SYM(p_cuOccupancy, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
	GL_SYM(p_cuLaunchKernel, "cuLaunchKernel");
	GL_SYM(p_cuMemAlloc, "cuMemAlloc_v2");
	GL_SYM(p_cuMemFree, "cuMemFree_v2");
	GL_SYM(p_cuMemHostAlloc, "cuMemHostAlloc");
	GL_SYM(p_cuMemFreeHost, "cuMemFreeHost");
	GL_SYM(p_cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
	GL_SYM(p_cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
	GL_SYM(p_cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
	GL_SYM(p_cuStreamCreate, "cuStreamCreate");
	GL_SYM(p_cuStreamDestroy, "cuStreamDestroy_v2");
	GL_SYM(p_cuEventCreate, "cuEventCreate");
	GL_SYM(p_cuEventRecord, "cuEventRecord");
	GL_SYM(p_cuEventSynchronize, "cuEventSynchronize");
	GL_SYM(p_cuEventElapsedTime, "cuEventElapsedTime");
	GL_SYM(p_cuEventDestroy, "cuEventDestroy_v2");
	GL_SYM(p_cuGetErrorString, "cuGetErrorString");
	// Optional: drivers before CUDA 9.2 lack it; devices are then matched
	// with NVML's by index.
	*(void **)(&p_cuDeviceGetUuid) = dlsym(gl_lib, "cuDeviceGetUuid");
	return NULL;
}

static const char *gl_errstr(CUresult r) {
	const char *s = NULL;
	if (p_cuGetErrorString == NULL || p_cuGetErrorString(r, &s) != 0) return NULL;
	return s;
}

static CUresult gl_init(void) { return p_cuInit(0); }
static CUresult gl_version(int *v) { return p_cuDriverGetVersion(v); }
static CUresult gl_count(int *n) { return p_cuDeviceGetCount(n); }

static CUresult gl_name(int ord, char *buf, int len) {
	CUdevice d;
	CUresult r = p_cuDeviceGet(&d, ord);
	if (r) return r;
	return p_cuDeviceGetName(buf, len, d);
}

static CUresult gl_uuid(int ord, unsigned char *out) {
	CUdevice d;
	CUresult r;
	if (!p_cuDeviceGetUuid) return 801; // CUDA_ERROR_NOT_SUPPORTED
	r = p_cuDeviceGet(&d, ord);
	if (r) return r;
	return p_cuDeviceGetUuid(out, d);
}

static CUresult gl_attr(int *v, int attr, int ord) {
	CUdevice d;
	CUresult r = p_cuDeviceGet(&d, ord);
	if (r) return r;
	return p_cuDeviceGetAttribute(v, attr, d);
}

static CUresult gl_ctx_create(uintptr_t *ctx, int ord) {
	CUdevice d;
	CUhandle c = NULL;
	CUresult r = p_cuDeviceGet(&d, ord);
	if (r) return r;
	r = p_cuCtxCreate(&c, 0, d);
	*ctx = (uintptr_t)c;
	return r;
}
static CUresult gl_ctx_destroy(uintptr_t c) { return p_cuCtxDestroy((CUhandle)c); }
static CUresult gl_ctx_sync(void) { return p_cuCtxSynchronize(); }

static CUresult gl_meminfo(unsigned long long *free_, unsigned long long *total) {
	size_t f = 0, t = 0;
	CUresult r = p_cuMemGetInfo(&f, &t);
	*free_ = f;
	*total = t;
	return r;
}

// gl_module_load hands ptx (NUL-terminated) to the driver's JIT with an
// error-log buffer of loglen bytes.
static CUresult gl_module_load(uintptr_t *mod, const char *ptx, char *log, unsigned int loglen) {
	int opts[2] = {5, 6}; // CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES
	void *vals[2];
	CUhandle m = NULL;
	CUresult r;
	vals[0] = log;
	vals[1] = (void *)(uintptr_t)loglen;
	r = p_cuModuleLoadDataEx(&m, ptx, 2, opts, vals);
	*mod = (uintptr_t)m;
	return r;
}
static CUresult gl_module_unload(uintptr_t m) { return p_cuModuleUnload((CUhandle)m); }

static CUresult gl_function(uintptr_t *fn, uintptr_t mod, const char *name) {
	CUhandle f = NULL;
	CUresult r = p_cuModuleGetFunction(&f, (CUhandle)mod, name);
	*fn = (uintptr_t)f;
	return r;
}

static CUresult gl_occupancy(int *n, uintptr_t fn, int block) {
	return p_cuOccupancy(n, (CUhandle)fn, block, 0);
}

// gl_launch passes each of the n parameters as a pointer to its 8 bytes in
// vals; the driver copies them before it returns.
static CUresult gl_launch(uintptr_t fn, unsigned int grid, unsigned int block, uintptr_t stream,
		unsigned long long *vals, int n) {
	void *params[8];
	int i;
	if (n > 8) return 1; // CUDA_ERROR_INVALID_VALUE
	for (i = 0; i < n; i++) params[i] = &vals[i];
	return p_cuLaunchKernel((CUhandle)fn, grid, 1, 1, block, 1, 1, 0, (CUhandle)stream, params, NULL);
}

static CUresult gl_alloc(uintptr_t *p, unsigned long long n) {
	CUdeviceptr d = 0;
	CUresult r = p_cuMemAlloc(&d, (size_t)n);
	*p = (uintptr_t)d;
	return r;
}
static CUresult gl_free(uintptr_t p) { return p_cuMemFree((CUdeviceptr)p); }
static CUresult gl_host_alloc(uintptr_t *p, unsigned long long n) {
	void *h = NULL;
	CUresult r = p_cuMemHostAlloc(&h, (size_t)n, 0);
	*p = (uintptr_t)h;
	return r;
}
static CUresult gl_free_host(uintptr_t p) { return p_cuMemFreeHost((void *)p); }
static CUresult gl_htod(uintptr_t dst, uintptr_t src, unsigned long long n, uintptr_t s) {
	return p_cuMemcpyHtoDAsync((CUdeviceptr)dst, (const void *)src, (size_t)n, (CUhandle)s);
}
static CUresult gl_dtoh(uintptr_t dst, uintptr_t src, unsigned long long n, uintptr_t s) {
	return p_cuMemcpyDtoHAsync((void *)dst, (CUdeviceptr)src, (size_t)n, (CUhandle)s);
}
static CUresult gl_dtod(uintptr_t dst, uintptr_t src, unsigned long long n, uintptr_t s) {
	return p_cuMemcpyDtoDAsync((CUdeviceptr)dst, (CUdeviceptr)src, (size_t)n, (CUhandle)s);
}
static CUresult gl_stream_create(uintptr_t *s) {
	CUhandle h = NULL;
	CUresult r = p_cuStreamCreate(&h, 1); // CU_STREAM_NON_BLOCKING
	*s = (uintptr_t)h;
	return r;
}
static CUresult gl_stream_destroy(uintptr_t s) { return p_cuStreamDestroy((CUhandle)s); }
static CUresult gl_event_create(uintptr_t *e) {
	CUhandle h = NULL;
	CUresult r = p_cuEventCreate(&h, 0); // CU_EVENT_DEFAULT: timing on
	*e = (uintptr_t)h;
	return r;
}
static CUresult gl_event_record(uintptr_t e, uintptr_t s) { return p_cuEventRecord((CUhandle)e, (CUhandle)s); }
static CUresult gl_event_sync(uintptr_t e) { return p_cuEventSynchronize((CUhandle)e); }
static CUresult gl_event_elapsed(float *ms, uintptr_t a, uintptr_t b) {
	return p_cuEventElapsedTime(ms, (CUhandle)a, (CUhandle)b);
}
static CUresult gl_event_destroy(uintptr_t e) { return p_cuEventDestroy((CUhandle)e); }
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

var (
	openOnce sync.Once
	openErr  error
)

// openDriver opens libcuda.so.1 (once per process; it stays loaded: the
// bench runs in its own process, never in the daemon).
func openDriver() (driver, error) {
	openOnce.Do(func() {
		var dlerr *C.char
		if missing := C.gl_open(&dlerr); missing != nil {
			name := C.GoString(missing)
			if name == "libcuda.so.1" {
				openErr = fmt.Errorf("%w: libcuda.so.1 not found (%s)", errNoDriver, clip(C.GoString(dlerr), 160))
				return
			}
			openErr = fmt.Errorf("%w: libcuda.so.1 has no %s (driver too old)", errNoDriver, name)
		}
	})
	if openErr != nil {
		return nil, openErr
	}
	return libcuda{}, nil
}

// libcuda is the driver over the dlopen'ed library.
type libcuda struct{}

func check(call string, r C.CUresult) error {
	if r == 0 {
		return nil
	}
	e := &cuError{Call: call, Code: int(r)}
	if s := C.gl_errstr(r); s != nil {
		e.Text = C.GoString(s)
	}
	return e
}

func (libcuda) Init() error { return check("cuInit", C.gl_init()) }

func (libcuda) Version() (int, error) {
	var v C.int
	err := check("cuDriverGetVersion", C.gl_version(&v))
	return int(v), err
}

func (libcuda) DeviceCount() (int, error) {
	var n C.int
	err := check("cuDeviceGetCount", C.gl_count(&n))
	return int(n), err
}

func (libcuda) DeviceName(dev int) (string, error) {
	var buf [256]C.char
	if err := check("cuDeviceGetName", C.gl_name(C.int(dev), &buf[0], C.int(len(buf)-1))); err != nil {
		return "", err
	}
	return C.GoString(&buf[0]), nil
}

func (libcuda) DeviceUUID(dev int) string {
	var u [16]C.uchar
	if C.gl_uuid(C.int(dev), &u[0]) != 0 {
		return ""
	}
	var b [16]byte
	for i := range u {
		b[i] = byte(u[i])
	}
	return formatUUID(b)
}

func (libcuda) Attribute(attr, dev int) (int, error) {
	var v C.int
	err := check("cuDeviceGetAttribute", C.gl_attr(&v, C.int(attr), C.int(dev)))
	return int(v), err
}

func (libcuda) CtxCreate(dev int) (uintptr, error) {
	var c C.uintptr_t
	err := check("cuCtxCreate", C.gl_ctx_create(&c, C.int(dev)))
	return uintptr(c), err
}

func (libcuda) CtxDestroy(c uintptr) { C.gl_ctx_destroy(C.uintptr_t(c)) }

func (libcuda) CtxSynchronize() error { return check("cuCtxSynchronize", C.gl_ctx_sync()) }

func (libcuda) MemInfo() (uint64, uint64, error) {
	var f, t C.ulonglong
	err := check("cuMemGetInfo", C.gl_meminfo(&f, &t))
	return uint64(f), uint64(t), err
}

// jitLogBytes is the JIT error log's buffer: enough for the lines that say
// why a module was refused.
const jitLogBytes = 4096

func (libcuda) ModuleLoad(ptx []byte) (uintptr, string, error) {
	src := C.CString(string(ptx))
	defer C.free(unsafe.Pointer(src))
	log := (*C.char)(C.calloc(jitLogBytes+1, 1))
	defer C.free(unsafe.Pointer(log))
	var m C.uintptr_t
	err := check("cuModuleLoadDataEx", C.gl_module_load(&m, src, log, jitLogBytes))
	return uintptr(m), C.GoString(log), err
}

func (libcuda) ModuleUnload(m uintptr) { C.gl_module_unload(C.uintptr_t(m)) }

func (libcuda) Function(m uintptr, name string) (uintptr, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var f C.uintptr_t
	err := check("cuModuleGetFunction "+name, C.gl_function(&f, C.uintptr_t(m), cname))
	return uintptr(f), err
}

func (libcuda) Occupancy(fn uintptr, block int) (int, error) {
	var n C.int
	err := check("cuOccupancyMaxActiveBlocksPerMultiprocessor", C.gl_occupancy(&n, C.uintptr_t(fn), C.int(block)))
	return int(n), err
}

func (libcuda) Launch(fn uintptr, grid, block int, stream uintptr, params ...uint64) error {
	if len(params) == 0 || len(params) > 8 {
		return fmt.Errorf("cuLaunchKernel: %d parameters (1 to 8)", len(params))
	}
	// vals holds no Go pointers and the driver copies it before it
	// returns, so passing Go memory follows cgo's rules.
	vals := make([]C.ulonglong, len(params))
	for i, p := range params {
		vals[i] = C.ulonglong(p)
	}
	return check("cuLaunchKernel", C.gl_launch(C.uintptr_t(fn), C.uint(grid), C.uint(block),
		C.uintptr_t(stream), &vals[0], C.int(len(vals))))
}

func (libcuda) MemAlloc(n uint64) (uintptr, error) {
	var p C.uintptr_t
	err := check("cuMemAlloc", C.gl_alloc(&p, C.ulonglong(n)))
	return uintptr(p), err
}

func (libcuda) MemFree(p uintptr) { C.gl_free(C.uintptr_t(p)) }

func (libcuda) MemHostAlloc(n uint64) (uintptr, error) {
	var p C.uintptr_t
	err := check("cuMemHostAlloc", C.gl_host_alloc(&p, C.ulonglong(n)))
	return uintptr(p), err
}

func (libcuda) MemFreeHost(p uintptr) { C.gl_free_host(C.uintptr_t(p)) }

func (libcuda) CopyHtoD(dst, src uintptr, n uint64, s uintptr) error {
	return check("cuMemcpyHtoDAsync", C.gl_htod(C.uintptr_t(dst), C.uintptr_t(src), C.ulonglong(n), C.uintptr_t(s)))
}

func (libcuda) CopyDtoH(dst, src uintptr, n uint64, s uintptr) error {
	return check("cuMemcpyDtoHAsync", C.gl_dtoh(C.uintptr_t(dst), C.uintptr_t(src), C.ulonglong(n), C.uintptr_t(s)))
}

func (libcuda) CopyDtoD(dst, src uintptr, n uint64, s uintptr) error {
	return check("cuMemcpyDtoDAsync", C.gl_dtod(C.uintptr_t(dst), C.uintptr_t(src), C.ulonglong(n), C.uintptr_t(s)))
}

func (libcuda) StreamCreate() (uintptr, error) {
	var s C.uintptr_t
	err := check("cuStreamCreate", C.gl_stream_create(&s))
	return uintptr(s), err
}

func (libcuda) StreamDestroy(s uintptr) { C.gl_stream_destroy(C.uintptr_t(s)) }

func (libcuda) EventCreate() (uintptr, error) {
	var e C.uintptr_t
	err := check("cuEventCreate", C.gl_event_create(&e))
	return uintptr(e), err
}

func (libcuda) EventRecord(e, s uintptr) error {
	return check("cuEventRecord", C.gl_event_record(C.uintptr_t(e), C.uintptr_t(s)))
}

func (libcuda) EventSynchronize(e uintptr) error {
	return check("cuEventSynchronize", C.gl_event_sync(C.uintptr_t(e)))
}

func (libcuda) EventElapsed(a, b uintptr) (float32, error) {
	var ms C.float
	err := check("cuEventElapsedTime", C.gl_event_elapsed(&ms, C.uintptr_t(a), C.uintptr_t(b)))
	return float32(ms), err
}

func (libcuda) EventDestroy(e uintptr) { C.gl_event_destroy(C.uintptr_t(e)) }

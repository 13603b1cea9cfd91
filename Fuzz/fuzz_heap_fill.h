/*
 * fuzz_heap_fill.h — fills every fresh heap block with a byte the harness chooses, so that
 * two decodes of one input under two fills show output that depends on memory no decoder
 * wrote (leftover heap contents: in a service, other requests' pixels).
 *
 * glibc's MALLOC_PERTURB_ / mallopt(M_PERTURB) do this outside the fuzzers, but ASan replaces
 * malloc, and its own fill (malloc_fill_byte, by default only the first 4 KiB) is fixed for the
 * process. ASan calls the hooks of __sanitizer_install_malloc_and_free_hooks after every
 * allocation of its allocator: malloc, realloc, posix_memalign, C++ new, from our code and from
 * the codec libraries (which are not instrumented but allocate through ASan all the same). The
 * hook fills the new block with the current byte. Only calloc must stay zeroed: ASan clears a
 * small calloc block after the hooks, but not a large one (fresh mmap pages), so `calloc`
 * below (a strong definition, which takes the place of ASan's weak one for the executable and
 * every library it loads) marks the thread as inside calloc and forwards to ASan's
 * interceptor, and the hook leaves the block alone.
 *
 * Included once per harness, by fuzz_common.h.
 */
#ifndef FUZZ_HEAP_FILL_H
#define FUZZ_HEAP_FILL_H

#include <sanitizer/allocator_interface.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/** The two fills a harness compares decodes under (MALLOC_PERTURB_'s 85 and 170). */
enum { FUZZ_FILL_A = 0x55, FUZZ_FILL_B = 0xAA };

/* The byte every fresh non-calloc block gets; read by the hook on any thread. */
static volatile uint8_t fuzz_fill_byte = FUZZ_FILL_A;
/* How deep the calling thread is inside calloc. */
static _Thread_local int fuzz_in_calloc;

/* ASan's calloc (its interceptor, which `calloc` aliases in the runtime). */
void *__interceptor_calloc(size_t count, size_t size);

void *calloc(size_t count, size_t size) {
    fuzz_in_calloc++;
    void *p = __interceptor_calloc(count, size);
    fuzz_in_calloc--;
    return p;
}

/* Kept out of coverage tracing (Fuzz/coverage_ignore.txt): it runs for every allocation. */
static void fuzz_fill_block(const volatile void *p, size_t size) {
    if (!fuzz_in_calloc && p) memset((void *)(uintptr_t)p, fuzz_fill_byte, size);
}

static void fuzz_no_free_hook(const volatile void *p) { (void)p; }

/* Fresh blocks from now on hold `byte` (the hook is installed on the first call). */
static inline void fuzz_heap_fill(uint8_t byte) {
    static int installed;
    if (!installed) {
        if (!__sanitizer_install_malloc_and_free_hooks(fuzz_fill_block, fuzz_no_free_hook)) __builtin_trap();
        installed = 1;
    }
    fuzz_fill_byte = byte;
}

#endif /* FUZZ_HEAP_FILL_H */

/*
 * ic_store_testing.h — TEST-ONLY hooks of the disk tier. A service never
 * calls these: they make failures that real file systems produce rarely
 * (a full disk, an exceeded quota, an I/O error) happen on demand, at a
 * chosen byte, so tests can check how the store handles them.
 *
 * Not part of the umbrella header: Swift reaches it with
 * `import CImageCore.Testing` (an explicit submodule, see module.modulemap),
 * C with #include "ic_store_testing.h".
 */
#ifndef IC_STORE_TESTING_H
#define IC_STORE_TESTING_H

#include <stdint.h>

#include "ic_error.h"
#include "ic_store.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * ic_store_write with a fault injected: once `fault_after_bytes` bytes of the
 * file have been written, the next write fails with `fault_errno` (e.g.
 * ENOSPC, EDQUOT or EIO), exactly as if the file system had returned it.
 * A `fault_errno` of 0 injects nothing.
 */
ic_status ic_store_write_with_fault(const char *dir, const ic_store_entry *entry,
                                    const ic_store_write_options *options, int fault_errno,
                                    uint64_t fault_after_bytes, ic_store_written *written,
                                    ic_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IC_STORE_TESTING_H */

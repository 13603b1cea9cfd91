/* fuzz_probe.c — sniffing and header parsing of any bytes. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ic_format f = ic_sniff(data, size);
    if ((int)f < IC_FORMAT_UNKNOWN || (int)f > IC_FORMAT_SVG) __builtin_trap();
    ic_info info;
    ic_error err;
    ic_status st = ic_probe(data, size, &info, &err);
    if (st == IC_OK && (info.orientation < 1 || info.orientation > 8)) __builtin_trap();
    if (st != IC_OK && err.message[0] == '\0') __builtin_trap();
    return 0;
}

/* fuzz_store.c — the disk tier's reader: arbitrary bytes as a cache entry file. */
#include "fuzz_common.h"

/* Runs a split read's parts on the calling thread, last part first. */
static void run_parts_backwards(void *context, uint32_t count, ic_store_part_fn part, void *arg) {
    (void)context;
    while (count > 0) part(arg, --count);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ic_store_read_options o;
    ic_store_read_options_init(&o);
    o.max_bytes = 32u << 20;
    /* The last byte picks a read in one part or in two; the entry is whole. */
    o.threads = size > 0 && (data[size - 1] & 1) ? 2 : 1;
    o.run_parts = run_parts_backwards;
    for (int kind = IC_STORE_KIND_BITMAP; kind <= IC_STORE_KIND_DATA; kind++) {
        ic_store_record r;
        ic_error err;
        ic_status st = ic_store_decode(data, size, (ic_store_kind)kind, "k", 1, &o, &r, &err);
        if (st != IC_OK) {
            if (err.message[0] == '\0') __builtin_trap(); /* a failure must say why */
            continue;
        }
        /* Touch every byte handed out: ASan catches short buffers. */
        volatile uint8_t sink = 0;
        if (r.image) {
            for (uint32_t f = 0; f < r.image->frame_count; f++) {
                for (uint32_t y = 0; y < r.image->height; y++) {
                    const uint8_t *row = ic_image_frame(r.image, f) + (size_t)y * r.image->stride;
                    for (size_t x = 0; x < (size_t)r.image->width * 4; x++) sink ^= row[x];
                }
            }
        }
        for (size_t i = 0; i < r.data_size; i++) sink ^= r.data[i];
        for (size_t i = 0; i < r.meta.etag_length; i++) sink ^= (uint8_t)r.meta.etag[i];
        for (size_t i = 0; i < r.meta.last_modified_length; i++) sink ^= (uint8_t)r.meta.last_modified[i];
        for (size_t i = 0; i < r.meta.user_data_length; i++) sink ^= r.meta.user_data[i];
        (void)sink;
        if ((r.image != NULL) != (kind == IC_STORE_KIND_BITMAP) || r.stored_size != size) __builtin_trap();
        ic_store_record_free(&r);
    }
    return 0;
}

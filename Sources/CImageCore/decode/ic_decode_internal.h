/*
 * ic_decode_internal.h — every decode/ header at once, for the files that use them
 * all (the JPEG decoder). Other files include the headers they use. Not installed.
 */
#ifndef IC_DECODE_INTERNAL_H
#define IC_DECODE_INTERNAL_H

#include "ic_apng.h"
#include "ic_dec_color.h"
#include "ic_decoder.h"
#include "ic_exif.h"
#include "ic_formats.h"
#include "ic_inc_engine.h"
#include "ic_sink.h"

#endif /* IC_DECODE_INTERNAL_H */

/* CImageCore.h — umbrella header of ImageKit's C core. */
#ifndef CIMAGECORE_H
#define CIMAGECORE_H

#include "ic_error.h"
#include "ic_format.h"
#include "ic_image.h"
#include "ic_color.h"
#include "ic_pool.h"
#include "ic_decode.h"
#include "ic_incremental.h"
#include "ic_hash.h"
#include "ic_store.h"
#include "ic_transform.h"
#include "ic_resize.h"
#include "ic_encode.h"
#include "ic_thread.h"
#include "ic_fetch.h"
#include "ic_fetch_policy.h"
#include "ic_op_corners.h"
#include "ic_op_tint.h"
#include "ic_op_color_adjust.h"
#include "ic_op_pixelate.h"
#include "ic_op_blur.h"
#include "ic_op_sharpen.h"
#include "ic_op_gravity.h"
#include "ic_op_composite.h"
#include "ic_op_rotate.h"
#include "ic_op_attention.h"
#include "ic_op_embed.h"
#include "ic_op_trim.h"

#endif /* CIMAGECORE_H */

/* hiredis, as Debian 12's libhiredis-dev (0.14) installs it: the synchronous API only (that
 * version ships no hiredis_ssl). ImageKitRedis calls it on its own threads. */
#ifndef IC_HIREDIS_H
#define IC_HIREDIS_H
#include <hiredis/hiredis.h>
#endif

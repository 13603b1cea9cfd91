/* thread.c — thread naming. */
#include <pthread.h>
#include <string.h>

#include "ic_thread.h"

void ic_thread_set_name(const char *name) {
    char buf[16];
    strncpy(buf, name ? name : "", sizeof buf - 1);
    buf[sizeof buf - 1] = '\0';
    (void)pthread_setname_np(pthread_self(), buf);
}

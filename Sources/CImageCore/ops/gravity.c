/*
 * gravity.c — placing a window in an area by gravity (see ic_op_gravity.h).
 */
#include "ic_op_gravity.h"

#include <math.h>

/* Where along one axis: 0 the near edge, 0.5 the middle, 1 the far edge. */
static void compass(ic_gravity_kind kind, double *fx, double *fy) {
    static const double X[] = {0.5, 0.5, 1, 1, 1, 0.5, 0, 0, 0};
    static const double Y[] = {0.5, 0, 0, 0.5, 1, 1, 1, 0.5, 0};
    unsigned k = (unsigned)kind <= IC_GRAVITY_NORTH_WEST ? (unsigned)kind : 0;
    *fx = X[k];
    *fy = Y[k];
}

/* The offset centring a window of `inner` on `focus` (an area coordinate), kept so the
 * window covers the area as far as it can: within [min(0, d), max(0, d)], d = outer - inner. */
static double centred_on(double focus, double outer, double inner) {
    double d = outer - inner;
    double lo = d < 0 ? d : 0, hi = d < 0 ? 0 : d;
    double v = focus - inner / 2;
    return v < lo ? lo : (v > hi ? hi : v);
}

void ic_gravity_place(const ic_gravity *g, double outer_w, double outer_h, double inner_w, double inner_h,
                      double *x, double *y) {
    int focus = g && g->kind == IC_GRAVITY_FOCUS && isfinite(g->x) && isfinite(g->y) && g->x >= 0 &&
                g->x <= 1 && g->y >= 0 && g->y <= 1;
    if (focus) {
        *x = centred_on(g->x * outer_w, outer_w, inner_w);
        *y = centred_on(g->y * outer_h, outer_h, inner_h);
        return;
    }
    double fx, fy;
    compass(g ? g->kind : IC_GRAVITY_CENTRE, &fx, &fy);
    *x = (outer_w - inner_w) * fx;
    *y = (outer_h - inner_h) * fy;
}

/* svg.c - the --plot picture, written as plain SVG text.
 *
 * Top: speedup of every policy over the baseline (levelset when it ran,
 * else the first policy), grouped by matrix, on a log2 axis so that a 2x
 * gain and a 2x loss are bars of the same length either side of 1x (the
 * shape of the paper's Figures 5.7 and 5.11). A failed run is an 'x' on the
 * 1x line. Below: the DAG shape of every matrix, width of each level
 * against the level (the paper's Figure 5.6 classes: wide, L-shape,
 * parallel). Hovering a bar or a curve shows the exact numbers (<title>). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"
#include "policy.h"

#define W 1000
#define CHART_H 330
#define CHART_TOP 80
#define CHART_LEFT 70
#define CHART_RIGHT 20
#define XLABEL_H 90
#define PANEL_W 320
#define PANEL_H 210
#define PANELS_PER_ROW 3
#define MAX_POINTS 300

/* Policies take their colour from the policy table; the serial baseline its own. */
const char *svg_policy_colour(int p)
{
    const policy_desc *d = p == POLICY_SERIAL ? NULL : policy_get((ata_policy)p);
    return d ? d->colour : "#8c564b";
}

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static const char *quantity(const bench_opts *o)
{
    return o->cmd == CMD_PCG ? "PCG solve time" : o->cmd == CMD_ILU0 ? "ILU0 factorisation time"
                                                                     : "SpTRSV solve time";
}

/* The run of (matrix, policy), or NULL. */
static const bench_run *find_run(const bench_results *R, int mi, int p)
{
    for (int k = 0; k < R->nruns; k++)
        if (R->runs[k].matrix == mi && R->runs[k].policy == p) return &R->runs[k];
    return NULL;
}

static int ok_time(const bench_opts *o, const bench_run *u, double *t)
{
    if (!u || u->status != ATA_OK || u->reps == 0) return 0;
    *t = run_time(o, u);
    return *t > 0;
}

static void speedup_chart(FILE *f, const bench_results *R, int base)
{
    const bench_opts *o = R->opt;
    int np = o->npolicies;
    double *s = malloc((size_t)R->nmats * (size_t)np * sizeof *s);
    int *groups = malloc((size_t)R->nmats * sizeof *groups);
    if (!s || !groups) { free(s); free(groups); return; }
    int ng = 0;
    double lo = 0, hi = 0;      /* log2 range */
    for (int i = 0; i < R->nmats; i++) {
        double tb;
        if (!ok_time(o, find_run(R, i, base), &tb)) continue;
        for (int k = 0; k < np; k++) {
            double t;
            double v = ok_time(o, find_run(R, i, o->policies[k]), &t) ? tb / t : NAN;
            s[(size_t)ng * np + k] = v;
            if (isfinite(v)) {
                double l = log2(v);
                if (l < lo) lo = l;
                if (l > hi) hi = l;
            }
        }
        groups[ng++] = i;
    }
    int ylo = (int)floor(lo), yhi = (int)ceil(hi);
    if (ylo > -1) ylo = -1;
    if (yhi < 1) yhi = 1;
    double plot_w = W - CHART_LEFT - CHART_RIGHT;
    double y0 = CHART_TOP, y1 = CHART_TOP + CHART_H;
#define YPOS(l) (y1 - ((l) - ylo) / (double)(yhi - ylo) * (y1 - y0))
    fprintf(f, "<text x=\"%d\" y=\"28\" font-size=\"18\" font-weight=\"bold\">Speedup over %s: %s</text>\n",
            CHART_LEFT, cli_policy_name(base), quantity(o));
    fprintf(f, "<text x=\"%d\" y=\"48\" font-size=\"12\" fill=\"#555\">%s %s, backend %s, %d thread%s; "
               "log2 axis, bars above 1x are faster than %s</text>\n",
            CHART_LEFT, BENCH_NAME, cli_cmd_name(o->cmd), ata_backend_name(R->backend), R->threads,
            R->threads == 1 ? "" : "s", cli_policy_name(base));
    /* legend */
    for (int k = 0; k < np; k++) {
        int x = CHART_LEFT + k * 110;
        fprintf(f, "<rect x=\"%d\" y=\"58\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                   "<text x=\"%d\" y=\"69\" font-size=\"12\">%s</text>\n",
                x, svg_policy_colour(o->policies[k]), x + 16, cli_policy_name(o->policies[k]));
    }
    /* axis and grid */
    int step = yhi - ylo > 12 ? 2 : 1;
    for (int l = ylo; l <= yhi; l += step) {
        double y = YPOS(l);
        char lab[32];
        if (l >= 0) snprintf(lab, sizeof lab, "%gx", pow(2, l));
        else snprintf(lab, sizeof lab, "1/%gx", pow(2, -l));
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%s\"/>"
                   "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%s</text>\n",
                CHART_LEFT, y, W - CHART_RIGHT, y, l == 0 ? "#000" : "#ddd", l == 0 ? "1.2" : "1",
                CHART_LEFT - 6, y + 4, lab);
    }
    fprintf(f, "<text transform=\"translate(18,%.0f) rotate(-90)\" font-size=\"12\" text-anchor=\"middle\">"
               "speedup over %s</text>\n", (y0 + y1) / 2, cli_policy_name(base));
    if (ng == 0) {
        fprintf(f, "<text x=\"%d\" y=\"%.0f\" font-size=\"14\" fill=\"#a00\">no matrix where %s succeeded: "
                   "nothing to compare</text>\n", CHART_LEFT + 20, (y0 + y1) / 2, cli_policy_name(base));
    }
    double gw = ng ? plot_w / ng : plot_w;
    double bw = gw * 0.8 / np;
    int rotate = 0;
    for (int g = 0; g < ng; g++)
        if (strlen(R->mats[groups[g]].label) * 7.0 > gw) rotate = 1;
    for (int g = 0; g < ng; g++) {
        int mi = groups[g];
        double gx = CHART_LEFT + g * gw + gw * 0.1;
        if (g % 2) fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#f6f6f6\"/>\n",
                           CHART_LEFT + g * gw, y0, gw, y1 - y0);
        for (int k = 0; k < np; k++) {
            double v = s[(size_t)g * np + k];
            double x = gx + k * bw;
            const bench_run *u = find_run(R, mi, o->policies[k]);
            if (isfinite(v)) {
                double ya = YPOS(0), yb = YPOS(log2(v));
                double top = ya < yb ? ya : yb, h = fabs(yb - ya);
                if (h < 1) h = 1;
                fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
                        x, top, bw * 0.92, h, svg_policy_colour(o->policies[k]));
                xml_text(f, R->mats[mi].label);
                fprintf(f, ", %s: %.3gx (%.4g s)</title></rect>\n", cli_policy_name(o->policies[k]), v, run_time(o, u));
                if (bw >= 22)
                    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" text-anchor=\"middle\">%.2f</text>\n",
                            x + bw * 0.46, v >= 1 ? top - 3 : top + h + 10, v);
            } else if (u) {
                fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" fill=\"%s\">x<title>",
                        x + bw / 2, YPOS(0) - 3, svg_policy_colour(o->policies[k]));
                xml_text(f, R->mats[mi].label);
                fprintf(f, ", %s: %s</title></text>\n", cli_policy_name(o->policies[k]), run_status(u));
            }
        }
        double lx = CHART_LEFT + (g + 0.5) * gw;
        if (rotate)
            fprintf(f, "<text transform=\"translate(%.1f,%.1f) rotate(-35)\" font-size=\"11\" text-anchor=\"end\">",
                    lx, y1 + 14);
        else
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">", lx, y1 + 16);
        xml_text(f, R->mats[mi].label);
        fputs("</text>\n", f);
    }
    /* Say which matrices have no bars, and why. */
    char note[512] = "";
    for (int i = 0; i < R->nmats; i++) {
        double tb;
        const bench_run *ub = find_run(R, i, base);
        if (ok_time(o, ub, &tb)) continue;
        char one[200];
        snprintf(one, sizeof one, "%s%s (%s)", note[0] ? ", " : "", R->mats[i].label,
                 !R->mats[i].loaded ? "not loaded" : ub ? run_status(ub) : "no run");
        if (strlen(note) + strlen(one) < sizeof note - 8) strcat(note, one);
        else if (!strstr(note, "...")) strcat(note, ", ...");
    }
    if (note[0]) {
        fprintf(f, "<text x=\"%d\" y=\"%.0f\" font-size=\"11\" fill=\"#a00\">No bars where %s failed: ",
                CHART_LEFT, y1 + XLABEL_H - 8, cli_policy_name(base));
        xml_text(f, note);
        fputs("</text>\n", f);
    }
#undef YPOS
    free(s);
    free(groups);
}

static void dag_panel(FILE *f, const bench_matrix *m, double px, double py)
{
    double left = px + 50, right = px + PANEL_W - 15, top = py + 40, bottom = py + PANEL_H - 35;
    int maxw = 1, maxl = 1;
    for (int t = 0; t < 2; t++) {
        if (!m->widths[t]) continue;
        if (m->max_width[t] > maxw) maxw = m->max_width[t];
        if (m->nlevels[t] > maxl) maxl = m->nlevels[t];
    }
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"13\" font-weight=\"bold\">", px + 10, py + 16);
    xml_text(f, m->label);
    fprintf(f, "</text>\n<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" fill=\"#555\">n %d, ", px + 10, py + 31, m->n);
    int first = 1;
    for (int t = 0; t < 2; t++) {
        if (!m->widths[t]) continue;
        fprintf(f, "%s%s: %d levels, %s", first ? "" : "; ", t ? "U" : "L", m->nlevels[t], m->dag_class[t]);
        first = 0;
    }
    fprintf(f, "</text>\n<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#999\"/>\n",
            left, top, right - left, bottom - top);
    /* Log axis: an L-shaped DAG's long tail of one or two tasks per level
     * is as visible as its wide head. Every level holds at least one task. */
    double ltop = log10((double)maxw);
    if (ltop < 1) ltop = 1;
#define WY(w) (bottom - log10((double)(w) < 1 ? 1.0 : (double)(w)) / ltop * (bottom - top))
    for (int d = 0; d <= (int)ltop; d++) {
        double y = WY(pow(10, d));
        fprintf(f, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#eee\"/>"
                   "<text x=\"%.0f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%.0f</text>\n",
                left, y, right, y, left - 4, y + 3, pow(10, d));
    }
    if (maxw > 1 && fabs(WY(maxw) - WY(pow(10, (int)log10((double)maxw)))) > 10)
        fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\" fill=\"#555\">%d</text>\n",
                left - 4, WY(maxw) + 3, maxw);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"10\">0</text>"
               "<text x=\"%.0f\" y=\"%.0f\" font-size=\"10\" text-anchor=\"end\">%d</text>"
               "<text x=\"%.0f\" y=\"%.0f\" font-size=\"10\" text-anchor=\"middle\">level</text>\n",
            left, bottom + 12, right, bottom + 12, maxl - 1, (left + right) / 2, bottom + 24);
    fprintf(f, "<text transform=\"translate(%.0f,%.0f) rotate(-90)\" font-size=\"10\" text-anchor=\"middle\">"
               "tasks in level (log)</text>\n", px + 14, (top + bottom) / 2);
    static const char *colour[2] = { "#1f77b4", "#ff7f0e" };
    for (int t = 0; t < 2; t++) {
        if (!m->widths[t]) continue;
        int L = m->nlevels[t];
        int npts = L < MAX_POINTS ? L : MAX_POINTS;
        /* Each point is the widest level of its bucket, so a narrow tail
         * stays visible and a single wide level is never averaged away. */
        fprintf(f, "<polyline fill=\"%s\" fill-opacity=\"0.15\" stroke=\"%s\" stroke-width=\"1.5\"%s points=\"",
                colour[t], colour[t], t ? " stroke-dasharray=\"4,2\"" : "");
        fprintf(f, "%.1f,%.1f ", left, bottom);
        for (int b = 0; b < npts; b++) {
            long lo = (long)b * L / npts, hi = (long)(b + 1) * L / npts;
            int w = 0;
            for (long l = lo; l < hi; l++)
                if (m->widths[t][l] > w) w = m->widths[t][l];
            double x = left + (maxl > 1 ? (double)lo / (maxl - 1) : 0.5) * (right - left);
            double y = WY(w);
            fprintf(f, "%.1f,%.1f ", x, y);
        }
        double xe = left + (maxl > 1 ? (double)(L - 1) / (maxl - 1) : 0.5) * (right - left);
        fprintf(f, "%.1f,%.1f\"><title>", xe, bottom);
        xml_text(f, m->label);
        fprintf(f, " %s triangle: %d levels, max width %d, mean width %.1f, %lld edges</title></polyline>\n",
                t ? "upper" : "lower", L, m->max_width[t], (double)m->n / L, m->m[t]);
    }
#undef WY
}

int svg_write(const char *path, const bench_results *R)
{
    const bench_opts *o = R->opt;
    FILE *f = fopen(path, "w");
    if (!f) { msg("--plot %s: cannot write", path); return -1; }
    int npanels = 0;
    for (int i = 0; i < R->nmats; i++) npanels += R->mats[i].widths[0] || R->mats[i].widths[1];
    int chart = o->cmd != CMD_INFO;
    double chart_h = chart ? CHART_TOP + CHART_H + XLABEL_H : 0;
    int rows = (npanels + PANELS_PER_ROW - 1) / PANELS_PER_ROW;
    double h = chart_h + 40 + rows * PANEL_H + 10;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" "
               "font-family=\"Helvetica, Arial, sans-serif\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, h, W, h);
    if (chart) {
        int base = -1;
        for (int k = 0; k < o->npolicies; k++)
            if (o->policies[k] == ATA_POLICY_LEVELSET) base = ATA_POLICY_LEVELSET;
        if (base < 0) base = o->policies[0];
        if (o->npolicies < 2)
            fprintf(f, "<text x=\"%d\" y=\"40\" font-size=\"16\">One policy (%s) in this run: no speedup to draw "
                       "(give --policy a list)</text>\n", CHART_LEFT, cli_policy_name(o->policies[0]));
        else
            speedup_chart(f, R, base);
    }
    fprintf(f, "<text x=\"%d\" y=\"%.0f\" font-size=\"18\" font-weight=\"bold\">DAG shape: tasks per level%s</text>\n",
            CHART_LEFT, chart_h + 28,
            o->cmd == CMD_INFO ? " (solid: lower triangle, dashed: upper)"
            : o->cmd == CMD_SPTRSV ? (o->uplo == ATA_LOWER ? " (lower triangle)" : " (upper triangle)")
            : o->reorder != ATA_REORDER_NONE ? " (lower triangle, natural order: before --reorder)"
                                             : " (lower triangle)");
    int k = 0;
    for (int i = 0; i < R->nmats; i++) {
        const bench_matrix *m = &R->mats[i];
        if (!m->widths[0] && !m->widths[1]) continue;
        dag_panel(f, m, 10 + (k % PANELS_PER_ROW) * (PANEL_W + 5), chart_h + 40 + (k / PANELS_PER_ROW) * PANEL_H);
        k++;
    }
    fputs("</svg>\n", f);
    int bad = ferror(f);
    if (fclose(f) || bad) { msg("--plot %s: write failed", path); return -1; }
    return 0;
}

/*
 * blink: an example Kiln plugin in C.
 *
 * Component "blink" switches its entity on and off: for `duty` of every `period`
 * seconds it has its own size, for the rest it shrinks to `off_scale` of it (a
 * warning light, a beacon). `glow` names the material it is meant to light with; Kiln
 * checks and patches that reference like any other.
 *
 * Kiln builds this file itself (cc -shared -fPIC against kiln_plugin.h) when the
 * project lists the folder under "plugins"; edit it while the editor runs and the
 * level is respawned with the new code.
 *
 * The instances live here as structure of arrays, one array per field, grown in
 * bulk: Kiln hands over a whole level's blink instances in one create call.
 */
#include <stdlib.h>
#include <string.h>
#include "kiln_plugin.h"

#define STR(s) { (const uint8_t *)(s), sizeof(s) - 1 }

static struct {
    size_t count, capacity;
    KilnEntity *entity;
    float *period, *duty, *off_scale;
    float (*rest)[12]; /* the local pose when it was first simulated */
    unsigned char *has_rest;
    float time;
} B;

static const KilnLogApiV0 *logger;

static void say(uint32_t level, const char *text) {
    if (logger) {
        KilnStr s = { (const uint8_t *)text, strlen(text) };
        logger->log(logger->ctx, level, s);
    }
}

static int grow(size_t needed) {
    if (needed <= B.capacity) return 1;
    size_t cap = B.capacity ? B.capacity : 64;
    while (cap < needed) cap *= 2;
#define GROW(field) do { void *p = realloc(B.field, cap * sizeof(*B.field)); if (!p) return 0; B.field = p; } while (0)
    GROW(entity); GROW(period); GROW(duty); GROW(off_scale); GROW(rest); GROW(has_rest);
#undef GROW
    B.capacity = cap;
    return 1;
}

static void remove_at(size_t i) {
    size_t last = --B.count;
    B.entity[i] = B.entity[last];
    B.period[i] = B.period[last];
    B.duty[i] = B.duty[last];
    B.off_scale[i] = B.off_scale[last];
    memcpy(B.rest[i], B.rest[last], sizeof(B.rest[i]));
    B.has_rest[i] = B.has_rest[last];
}

/* Records: period f32, duty f32, off_scale f32, glow u64 (the field order below). */
static KilnResult create(void *user, const KilnEntity *entities, size_t count,
                         const uint8_t *data, size_t record_size) {
    (void)user;
    if (record_size != 20) return 1;
    if (!grow(B.count + count)) {
        say(2, "blink: out of memory");
        return 2;
    }
    for (size_t i = 0; i < count; i++) {
        const uint8_t *r = data + i * record_size;
        size_t k = B.count++;
        B.entity[k] = entities[i];
        memcpy(&B.period[k], r, 4);
        memcpy(&B.duty[k], r + 4, 4);
        memcpy(&B.off_scale[k], r + 8, 4);
        B.has_rest[k] = 0;
    }
    return KILN_OK;
}

static void destroy(void *user, KilnEntity e) {
    (void)user;
    for (size_t i = 0; i < B.count; i++)
        if (B.entity[i] == e) { remove_at(i); return; }
}

static void gc(void *user, KilnAliveFn alive, void *ctx) {
    (void)user;
    for (size_t i = 0; i < B.count;)
        if (alive(ctx, B.entity[i])) i++; else remove_at(i);
}

static void simulate(void *user, float dt, const KilnWorldApiV0 *w) {
    (void)user;
    B.time += dt;
    for (size_t i = 0; i < B.count; i++) {
        KilnEntity e = B.entity[i];
        if (!w->is_alive(w->ctx, e)) continue;
        if (!B.has_rest[i]) {
            if (!w->local_pose(w->ctx, e, B.rest[i])) continue;
            B.has_rest[i] = 1;
        }
        float period = B.period[i] > 0.01f ? B.period[i] : 0.01f;
        float t = B.time / period;
        float phase = t - (float)(long long)t;
        float scale = phase < B.duty[i] ? 1.0f : B.off_scale[i];
        float m[12];
        for (int c = 0; c < 9; c++) m[c] = B.rest[i][c] * scale; /* the three axes */
        for (int c = 9; c < 12; c++) m[c] = B.rest[i][c];        /* the translation */
        w->set_local_pose(w->ctx, e, m);
    }
}

static const KilnFieldDecl fields[] = {
    { STR("period"), KILN_FIELD_FLOAT, 0.05, 60, STR(""), STR("1"), STR("Seconds from one flash to the next.") },
    { STR("duty"), KILN_FIELD_FLOAT, 0, 1, STR(""), STR("0.5"), STR("The part of each period it is on.") },
    { STR("off_scale"), KILN_FIELD_FLOAT, 0.01, 1, STR(""), STR("0.3"), STR("Its size while off, relative to on.") },
    { STR("glow"), KILN_FIELD_RESOURCE, 0, 0, STR("material"), STR(""), STR("The material it lights with.") },
};

static KilnResult init(KilnGetApi get) {
    logger = get(KILN_LOG_API_ID, 0);
    const KilnRegistryApiV0 *registry = get(KILN_REGISTRY_API_ID, 0);
    if (!registry || !get(KILN_WORLD_API_ID, 0)) return 1;
    KilnComponentDeclV0 decl = {
        STR("blink"), 46, STR("Switches the entity on and off (example plugin, C)."),
        fields, sizeof(fields) / sizeof(fields[0]), NULL,
        create, destroy, gc, simulate,
    };
    return registry->register_component(registry->ctx, &decl);
}

static void shutdown(void) {
    free(B.entity); free(B.period); free(B.duty); free(B.off_scale);
    free(B.rest); free(B.has_rest);
    memset(&B, 0, sizeof(B));
}

static const KilnPluginApiV0 api = { STR("blink"), init, shutdown, NULL };

const void *kiln_get_plugin_api(uint32_t api_id, uint32_t version) {
    return api_id == KILN_PLUGIN_API_ID && version == 0 ? &api : NULL;
}

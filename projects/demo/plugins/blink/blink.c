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
 * Component "door" slides its entity by `open_offset` while the entity its `switch`
 * field names is pressed down (lower than where it started by more than `travel`
 * metres): an entity field, which Kiln hands over as the switch's KilnEntity handle,
 * or KILN_NO_ENTITY for none. The switch may be destroyed while the door lives: the
 * handle is then dead, which is_alive says, and the door stays shut.
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

/* ---- door ------------------------------------------------------------------ */

static struct {
    size_t count, capacity;
    KilnEntity *entity, *sw;
    float (*offset)[3];
    float *travel;
    float (*rest)[12];       /* the door's local pose when first simulated */
    float *switch_rest_y;    /* the switch's world height then */
    unsigned char *has_rest;
} D;

static int door_grow(size_t needed) {
    if (needed <= D.capacity) return 1;
    size_t cap = D.capacity ? D.capacity : 16;
    while (cap < needed) cap *= 2;
#define GROW(field) do { void *p = realloc(D.field, cap * sizeof(*D.field)); if (!p) return 0; D.field = p; } while (0)
    GROW(entity); GROW(sw); GROW(offset); GROW(travel); GROW(rest); GROW(switch_rest_y); GROW(has_rest);
#undef GROW
    D.capacity = cap;
    return 1;
}

static void door_remove_at(size_t i) {
    size_t last = --D.count;
    D.entity[i] = D.entity[last];
    D.sw[i] = D.sw[last];
    memcpy(D.offset[i], D.offset[last], sizeof(D.offset[i]));
    D.travel[i] = D.travel[last];
    memcpy(D.rest[i], D.rest[last], sizeof(D.rest[i]));
    D.switch_rest_y[i] = D.switch_rest_y[last];
    D.has_rest[i] = D.has_rest[last];
}

/* Records: switch u64 (an entity handle), open_offset f32[3], travel f32. */
static KilnResult door_create(void *user, const KilnEntity *entities, size_t count,
                              const uint8_t *data, size_t record_size) {
    (void)user;
    if (record_size != 24) return 1;
    if (!door_grow(D.count + count)) {
        say(2, "door: out of memory");
        return 2;
    }
    for (size_t i = 0; i < count; i++) {
        const uint8_t *r = data + i * record_size;
        size_t k = D.count++;
        D.entity[k] = entities[i];
        memcpy(&D.sw[k], r, 8);
        memcpy(D.offset[k], r + 8, 12);
        memcpy(&D.travel[k], r + 20, 4);
        D.has_rest[k] = 0;
    }
    return KILN_OK;
}

static void door_destroy(void *user, KilnEntity e) {
    (void)user;
    for (size_t i = 0; i < D.count; i++)
        if (D.entity[i] == e) { door_remove_at(i); return; }
}

static void door_gc(void *user, KilnAliveFn alive, void *ctx) {
    (void)user;
    for (size_t i = 0; i < D.count;)
        if (alive(ctx, D.entity[i])) i++; else door_remove_at(i);
}

static void door_simulate(void *user, float dt, const KilnWorldApiV0 *w) {
    (void)user; (void)dt;
    for (size_t i = 0; i < D.count; i++) {
        KilnEntity e = D.entity[i], sw = D.sw[i];
        if (!w->is_alive(w->ctx, e)) continue;
        float switch_pose[12];
        /* No switch, or one destroyed since: a dead handle, and the door stays shut. */
        int has_switch = sw != KILN_NO_ENTITY && w->is_alive(w->ctx, sw) &&
                         w->world_pose(w->ctx, sw, switch_pose);
        if (!D.has_rest[i]) {
            if (!w->local_pose(w->ctx, e, D.rest[i])) continue;
            D.switch_rest_y[i] = has_switch ? switch_pose[10] : 0.0f;
            D.has_rest[i] = 1;
        }
        int pressed = has_switch && D.switch_rest_y[i] - switch_pose[10] > D.travel[i];
        float m[12];
        memcpy(m, D.rest[i], sizeof(m));
        if (pressed)
            for (int c = 0; c < 3; c++) m[9 + c] += D.offset[i][c];
        w->set_local_pose(w->ctx, e, m);
    }
}

static const KilnFieldDecl door_fields[] = {
    { STR("switch"), KILN_FIELD_ENTITY, 0, 0, STR(""), STR(""), STR("The entity that opens it while pressed down.") },
    { STR("open_offset"), KILN_FIELD_VEC3, -100, 100, STR(""), STR("[1, 0, 0]"), STR("Where it slides to while open, in metres from where it stands.") },
    { STR("travel"), KILN_FIELD_FLOAT, 0.001, 10, STR(""), STR("0.02"), STR("How far down the switch must go, in metres.") },
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
    KilnResult result = registry->register_component(registry->ctx, &decl);
    if (result != KILN_OK) return result;
    KilnComponentDeclV0 door = {
        STR("door"), 47, STR("Slides open while the entity it names is pressed down (example plugin, C)."),
        door_fields, sizeof(door_fields) / sizeof(door_fields[0]), NULL,
        door_create, door_destroy, door_gc, door_simulate,
    };
    return registry->register_component(registry->ctx, &door);
}

static void shutdown(void) {
    free(B.entity); free(B.period); free(B.duty); free(B.off_scale);
    free(B.rest); free(B.has_rest);
    memset(&B, 0, sizeof(B));
    free(D.entity); free(D.sw); free(D.offset); free(D.travel); free(D.rest);
    free(D.switch_rest_y); free(D.has_rest);
    memset(&D, 0, sizeof(D));
}

static const KilnPluginApiV0 api = { STR("blink"), init, shutdown, NULL };

const void *kiln_get_plugin_api(uint32_t api_id, uint32_t version) {
    return api_id == KILN_PLUGIN_API_ID && version == 0 ? &api : NULL;
}

/*
 * kiln_plugin.h: the C ABI between Kiln and its plugins.
 *
 * Mirrors plugins/sdk/src/abi.rs one to one; a test compiles this header and compares
 * every struct's size and field offsets with the Rust definitions.
 *
 * A plugin is a dynamic library exporting one function:
 *
 *     const void *kiln_get_plugin_api(uint32_t api_id, uint32_t version);
 *
 * returning its KilnPluginApiV0 for (KILN_PLUGIN_API_ID, 0), and NULL for anything it
 * does not provide. Kiln calls init() with its own lookup, get_engine_api(id, version),
 * which returns a table or NULL.
 *
 * Versioning: a released table never changes. A change is a new version (a new
 * struct, e.g. KilnWorldApiV1) and Kiln keeps serving the old ones, so a plugin built
 * against an old header keeps loading.
 *
 * Nothing here may unwind across the boundary: return a non-zero KilnResult instead.
 */
#ifndef KILN_PLUGIN_H
#define KILN_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* UTF-8 text: a pointer and a length, not NUL-terminated. */
typedef struct KilnStr {
    const uint8_t *ptr;
    size_t len;
} KilnStr;

/* An entity: index in the low 32 bits, generation in the high 32 bits. */
typedef uint64_t KilnEntity;

typedef int32_t KilnResult;
#define KILN_OK 0
#define KILN_PANICKED (-1000)

/* API ids: four ASCII characters, big endian. */
#define KILN_PLUGIN_API_ID 0x504C5547u   /* 'PLUG' */
#define KILN_REGISTRY_API_ID 0x52454749u /* 'REGI' */
#define KILN_WORLD_API_ID 0x57524C44u    /* 'WRLD' */
#define KILN_LOG_API_ID 0x4C4F475Fu      /* 'LOG_' */

typedef const void *(*KilnGetApi)(uint32_t api_id, uint32_t version);

/* The plugin API, version 0. Function pointers marked "required" must not be
 * NULL: Kiln refuses the plugin, naming it and the field. */
typedef struct KilnPluginApiV0 {
    KilnStr name;
    KilnResult (*init)(KilnGetApi get_engine_api); /* required */
    void (*shutdown)(void);   /* may be NULL: nothing to do before unloading */
    void (*update)(float dt); /* may be NULL */
} KilnPluginApiV0;

/* Field kinds, and how each is packed in an instance record (little endian, fields in
 * declaration order, no padding). */
enum KilnFieldKind {
    KILN_FIELD_BOOL = 0,     /* uint32_t, 0 or 1 */
    KILN_FIELD_INT = 1,      /* int64_t */
    KILN_FIELD_FLOAT = 2,    /* float */
    KILN_FIELD_VEC3 = 3,     /* float[3] */
    KILN_FIELD_ANGLES = 4,   /* float[3], degrees */
    KILN_FIELD_COLOR = 5,    /* float[4] */
    KILN_FIELD_RESOURCE = 6, /* uint64_t resource id, 0 for none */
    KILN_FIELD_ENTITY = 7    /* KilnEntity of another entity of the level, KILN_NO_ENTITY for none */
};

/* An entity field that names no entity (never a live entity). */
#define KILN_NO_ENTITY UINT64_MAX

typedef struct KilnFieldDecl {
    KilnStr name;
    uint32_t kind;
    /* The range: of the value (INT, FLOAT), or of each of its numbers (VEC3,
     * ANGLES, COLOR; min = max = 0 is none). Ignored for BOOL and RESOURCE. */
    double min;
    double max;
    KilnStr resource_type;
    KilnStr default_json;
    KilnStr doc;
} KilnFieldDecl;

typedef uint32_t (*KilnAliveFn)(void *ctx, KilnEntity entity);

struct KilnWorldApiV0;

/* A component type. register_component refuses it (and init's plugin is not
 * loaded), naming the plugin, the component and the field, when a required
 * function is NULL or `fields` is NULL with a non-zero `field_count`. */
typedef struct KilnComponentDeclV0 {
    KilnStr name;
    int32_t spawn_order;
    KilnStr doc;
    const KilnFieldDecl *fields; /* may be NULL when field_count is 0 */
    size_t field_count;
    void *user;
    KilnResult (*create)(void *user, const KilnEntity *entities, size_t count,
                         const uint8_t *data, size_t record_size); /* required */
    /* may be NULL: Kiln then calls gc with that one entity reported dead */
    void (*destroy)(void *user, KilnEntity entity);
    void (*gc)(void *user, KilnAliveFn alive, void *ctx); /* required */
    void (*simulate)(void *user, float dt, const struct KilnWorldApiV0 *world); /* may be NULL */
} KilnComponentDeclV0;

typedef struct KilnRegistryApiV0 {
    KilnResult (*register_component)(void *ctx, const KilnComponentDeclV0 *decl);
    void *ctx;
} KilnRegistryApiV0;

typedef struct KilnWorldApiV0 {
    uint32_t (*is_alive)(void *ctx, KilnEntity entity);
    uint32_t (*world_pose)(void *ctx, KilnEntity entity, float *out12);
    uint32_t (*set_local_translation)(void *ctx, KilnEntity entity, const float *xyz);
    uint32_t (*local_pose)(void *ctx, KilnEntity entity, float *out12);
    uint32_t (*set_local_pose)(void *ctx, KilnEntity entity, const float *m12);
    void *ctx;
} KilnWorldApiV0;

enum KilnLogLevel { KILN_LOG_INFO = 0, KILN_LOG_WARNING = 1, KILN_LOG_ERROR = 2 };

typedef struct KilnLogApiV0 {
    void (*log)(void *ctx, uint32_t level, KilnStr message);
    void *ctx;
} KilnLogApiV0;

#ifdef __cplusplus
}
#endif

#endif /* KILN_PLUGIN_H */

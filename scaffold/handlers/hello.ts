// One resource and its handler. The schema is written once, in TypeBox: it types the handler
// (`spec.greeting` is a string, `patch.status` takes only what the status schema has), and it is
// the CRD's OpenAPI schema that `kobun manifests` prints and `kobun dev` installs.
import { defineResource, on } from "kobun";
import Type from "typebox";

export const Hellos = defineResource({
  group: "example.com",
  kind: "Hello",
  plural: "hellos",
  schema: {
    spec: Type.Object({
      greeting: Type.String({ minLength: 1 }),
    }),
    status: Type.Object({
      // What create_fn returns is stored here, under its id.
      create_fn: Type.Optional(Type.Object({ message: Type.String() })),
    }),
  },
  printerColumns: [{ name: "Message", type: "string", jsonPath: ".status.create_fn.message" }],
});

// Runs once per new Hello. Throw TemporaryError to be retried, PermanentError to give up.
on.create(Hellos, ({ name, spec, logger }) => {
  logger.info(`greeting ${name}`);
  return { message: `${spec.greeting}, ${name}` };
}, { id: "create_fn" });

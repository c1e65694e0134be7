// The request and response objects of the main server, born with express's prototypes.
//
// express gives every request and response its app's prototypes as it takes them (app.handle calls
// Object.setPrototypeOf(req, app.request) and the same for res). Changing the prototype of an object V8 has already
// shaped is slow, and what it leaves behind outlives the request: about a third of what each request allocated
// survived the young generation's collections, to be collected by the slower old-generation ones (the design notes
// give the figures).
//
// node:http builds each request and response from the classes the server is given (http.createServer's documented
// IncomingMessage and ServerResponse options). These build them with the app's prototypes from the start, so
// express's call finds the prototype it sets already there, which V8 takes as no change. express still sets it: a
// request that reaches the app without these classes (a test's server, supertest) is served as before, only slower.
import { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';

/** A constructor whose prototype can be replaced: what its instances are built with. */
type Replaceable = { prototype: object };

/**
 * node:http's IncomingMessage and ServerResponse are functions that set up `this` when called (not classes, which
 * only `new` may run): then a constructor of our own can build the object from its own prototype and have node's set
 * it up. Where a Node release makes them classes, the server keeps node's own (and express sets the prototypes).
 */
const isClass = (built: object): boolean => Function.prototype.toString.call(built).startsWith('class');
export const canBuildWithPrototypes = !isClass(IncomingMessage) && !isClass(ServerResponse);

/** What node never passes to the constructors below. */
const sizeOnly = Symbol('size only');

export class ExpressMessages {
  /** Builds each request: with the adopted app's request prototype, node:http's own before an app is adopted. */
  readonly IncomingMessage: typeof IncomingMessage;
  /** Builds each response: with the adopted app's response prototype, node:http's own before. */
  readonly ServerResponse: typeof ServerResponse;

  constructor() {
    // function constructors, whose prototype can be replaced once an app is adopted. V8 sizes the objects a function
    // constructs by the `this.<name> =` assignments in its body; node's set 26 properties on a request and 42 on a
    // response, and with none in the body the most of them went to a separate store grown as they were added (a
    // cache hit, which express never sees, cost about a fifth more). The assignments under `sizeOnly` never run:
    // node always passes a socket and a request. They only tell V8 how large to make the objects.
    const Request = function (this: Record<string, unknown>, socket: Socket): void {
      // biome-ignore format: the size hint stays one line
      if ((socket as unknown) === sizeOnly) this.a0 = this.a1 = this.a2 = this.a3 = this.a4 = this.a5 = this.a6 = this.a7 = this.a8 = this.a9 = this.b0 = this.b1 = this.b2 = this.b3 = this.b4 = this.b5 = this.b6 = this.b7 = this.b8 = this.b9 = this.c0 = this.c1 = this.c2 = this.c3 = this.c4 = this.c5 = 0;
      Reflect.apply(IncomingMessage, this, [socket]);
    };
    Request.prototype = IncomingMessage.prototype;
    const Response = function (this: Record<string, unknown>, req: IncomingMessage, options?: unknown): void {
      // biome-ignore format: the size hint stays one line
      if ((req as unknown) === sizeOnly) this.a0 = this.a1 = this.a2 = this.a3 = this.a4 = this.a5 = this.a6 = this.a7 = this.a8 = this.a9 = this.b0 = this.b1 = this.b2 = this.b3 = this.b4 = this.b5 = this.b6 = this.b7 = this.b8 = this.b9 = this.c0 = this.c1 = this.c2 = this.c3 = this.c4 = this.c5 = this.c6 = this.c7 = this.c8 = this.c9 = this.d0 = this.d1 = this.d2 = this.d3 = this.d4 = this.d5 = this.d6 = this.d7 = this.d8 = this.d9 = this.e0 = this.e1 = 0;
      Reflect.apply(ServerResponse, this, [req, options]);
    };
    Response.prototype = ServerResponse.prototype;
    this.IncomingMessage = Request as unknown as typeof IncomingMessage;
    this.ServerResponse = Response as unknown as typeof ServerResponse;
  }

  /**
   * Requests and responses built from now on have `app`'s prototypes (app.request and app.response): the server is
   * made, and listens, before the app exists (the services need its port).
   */
  adopt(app: Express): void {
    (this.IncomingMessage as Replaceable).prototype = app.request;
    (this.ServerResponse as Replaceable).prototype = app.response;
  }
}

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

export class ExpressMessages {
  /** Builds each request: with the adopted app's request prototype, node:http's own before an app is adopted. */
  readonly IncomingMessage: typeof IncomingMessage;
  /** Builds each response: with the adopted app's response prototype, node:http's own before. */
  readonly ServerResponse: typeof ServerResponse;

  constructor() {
    // function constructors, whose prototype can be replaced once an app is adopted
    const Request = function (this: IncomingMessage, socket: Socket): void {
      Reflect.apply(IncomingMessage, this, [socket]);
    };
    Request.prototype = IncomingMessage.prototype;
    const Response = function (this: ServerResponse, req: IncomingMessage, options?: unknown): void {
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
